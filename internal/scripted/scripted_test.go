package scripted_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/nous-go/nous/internal/scripted"
)

// A recorded stream splits into its events, each with its blank line,
// whatever the line ends.
func TestFrames(t *testing.T) {
	for _, tc := range []struct {
		name, sse string
		want      []string
	}{
		{"lf", "event: a\ndata: {}\n\nevent: b\ndata: {\"x\":1}\n\n", []string{"event: a\ndata: {}\n\n", "event: b\ndata: {\"x\":1}\n\n"}},
		{"crlf", "data: 1\r\n\r\ndata: 2\r\n\r\n", []string{"data: 1\n\n", "data: 2\n\n"}},
		{"blank lines between and a last event without its blank line", "\n\ndata: 1\n\n\n\ndata: 2\n", []string{"data: 1\n\n", "data: 2\n"}},
		{"empty", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := scripted.Frames(tc.sse)
			if strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// A stream is played frame by frame, and an aborted one ends with an
// error the client reads, not with a clean end of the body.
func TestStreamReply(t *testing.T) {
	frames := []string{"data: 1\n\n", "data: 2\n\n"}
	for _, abort := range []bool{false, true} {
		s := scripted.NewReplies(func(n int, path string, body []byte) scripted.Reply {
			return scripted.Reply{Frames: frames, Abort: abort}
		})
		resp, err := http.Post(s.URL()+"/v1/stream", "application/json", strings.NewReader(`{"q":1}`))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(got) != strings.Join(frames, "") {
			t.Errorf("abort %v: read %q", abort, got)
		}
		if (err != nil) != abort {
			t.Errorf("abort %v: read error %v", abort, err)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
			t.Errorf("content type %q", ct)
		}
		if r := s.Requests(); len(r) != 1 || string(r[0]) != `{"q":1}` {
			t.Errorf("requests %q", r)
		}
		s.Close()
	}
}
