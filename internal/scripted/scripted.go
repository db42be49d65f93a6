// Package scripted is the HTTP side of the provider modules' scripted
// models: a local server that answers each request with the next reply of
// a script and keeps the bodies of the requests.
package scripted

import (
	"cmp"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// Server is a local HTTP server that answers the n-th request (from 0)
// with answer(n, path, body), an HTTP status and a JSON body; body is the
// request's. A provider's
// scripted model embeds it: its URL, Requests and Close are the model's.
type Server struct {
	srv    *httptest.Server
	answer func(n int, path string, body []byte) Reply

	mu     sync.Mutex
	bodies [][]byte
}

// New starts a Server; Close stops it.
func New(answer func(n int, path string, body []byte) (int, string)) *Server {
	return NewReplies(func(n int, path string, body []byte) Reply {
		status, resp := answer(n, path, body)
		return Reply{Status: status, Body: resp}
	})
}

// Reply is what a Server answers a request with: an HTTP status and a
// JSON body, or, when Frames is set, a stream of Server-Sent Events.
type Reply struct {
	Status int
	Body   string
	// Frames are the events of a stream, each whole with its blank line
	// ("event: x\ndata: {...}\n\n"), written and flushed one by one.
	Frames []string
	// Abort cuts the connection after the frames, without ending the
	// response: the client reads an unexpected end of its body.
	Abort bool
}

// NewReplies starts a Server that answers the n-th request with answer(n,
// path, body), which may be a stream; Close stops it.
func NewReplies(answer func(n int, path string, body []byte) Reply) *Server {
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
	reply := s.answer(n, r.URL.Path, body)
	if reply.Frames == nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(reply.Status)
		io.WriteString(w, reply.Body)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(cmp.Or(reply.Status, http.StatusOK))
	flusher, _ := w.(http.Flusher)
	for _, f := range reply.Frames {
		io.WriteString(w, f)
		if flusher != nil {
			flusher.Flush()
		}
	}
	if reply.Abort {
		panic(http.ErrAbortHandler) // the server closes the connection mid-body
	}
}

// Frames splits a recorded stream of Server-Sent Events into its events,
// each with the blank line that ends it. Lines may end in "\r\n" or "\n".
func Frames(sse string) []string {
	sse = strings.ReplaceAll(sse, "\r\n", "\n")
	var frames []string
	for f := range strings.SplitAfterSeq(sse, "\n\n") {
		if strings.TrimSpace(f) != "" {
			frames = append(frames, f)
		}
	}
	return frames
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
