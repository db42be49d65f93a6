// Package scripted is the HTTP side of the provider modules' scripted
// models: a local server that answers each request with the next reply of
// a script and keeps the bodies of the requests.
package scripted

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
)

// Server is a local HTTP server that answers the n-th request (from 0)
// with answer(n, path, body), an HTTP status and a JSON body; body is the
// request's. A provider's
// scripted model embeds it: its URL, Requests and Close are the model's.
type Server struct {
	srv    *httptest.Server
	answer func(n int, path string, body []byte) (int, string)

	mu     sync.Mutex
	bodies [][]byte
}

// New starts a Server; Close stops it.
func New(answer func(n int, path string, body []byte) (int, string)) *Server {
	s := &Server{answer: answer}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	n := len(s.bodies)
	s.bodies = append(s.bodies, body)
	s.mu.Unlock()
	status, resp := s.answer(n, r.URL.Path, body)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, resp)
}

// URL is the server's base URL, for the SDK's client.
func (s *Server) URL() string { return s.srv.URL }

// Requests returns the JSON bodies of the requests so far, in order.
func (s *Server) Requests() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.bodies...)
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// Exhausted is the message of a request past the end of a script of n
// replies, which a server answers with an HTTP 500.
func Exhausted(n int) string {
	return fmt.Sprintf("the script has %d replies; this is request %d", n, n+1)
}

// Script returns the reply function of a fixed script: the n-th request
// gets replies[n], and one past the last past(len(replies)), the reply a
// provider's model gives for an exhausted script (an HTTP 500 that says
// so, built with [Exhausted]).
func Script[R any](replies []R, past func(n int) R) func(n int, request []byte) R {
	return func(n int, _ []byte) R {
		if n >= len(replies) {
			return past(len(replies))
		}
		return replies[n]
	}
}
