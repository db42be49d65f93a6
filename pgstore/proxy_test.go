package pgstore_test

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// proxy forwards connections to the test server and records the round
// trips its clients make, each labelled with the SQL it runs: a Query
// message is one, and so is a run of extended-protocol messages up to a
// Sync (its SQL that of its first Parse, or of the statement its first
// Bind names). A ping is a round trip like any other. A round trip of SQL
// that slow names is held: its request for the delay's request time
// before it goes to the server, its answer for its answer time before it
// goes back.
type proxy struct {
	ln     net.Listener
	server string
	mu     sync.Mutex
	trips  []string
	conns  []*net.TCPConn // the clients' ends
	slow   map[string]delay
}

// delay is how long a round trip's request and its answer are held.
type delay struct{ request, answer time.Duration }

// newProxy starts a proxy to the server of dsn, closed when t ends, and
// returns it with dsn through it.
func newProxy(t *testing.T, dsn string) (*proxy, string) {
	t.Helper()
	u, err := url.Parse(dsn)
	must(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	p := &proxy{ln: ln, server: u.Host, slow: map[string]delay{}}
	go p.accept()
	t.Cleanup(func() {
		ln.Close()
		p.reset()
	})
	u.Host = ln.Addr().String()
	return p, u.String()
}

// hold holds the round trips of sql as d says, from now on; a zero d
// holds them no more.
func (p *proxy) hold(sql string, d delay) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.slow[sql] = d
}

func (p *proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		p.conns = append(p.conns, c.(*net.TCPConn))
		p.mu.Unlock()
		go p.serve(c)
	}
}

// serve forwards c to the server and records its round trips until
// either side ends.
func (p *proxy) serve(c net.Conn) {
	defer c.Close()
	srv, err := net.Dial("tcp", p.server)
	if err != nil {
		return
	}
	defer srv.Close()
	var held atomic.Int64 // how long the server's next answer waits, in ns
	go func() {
		defer c.Close() // the server ended: so does the client's end
		buf := make([]byte, 64<<10)
		for {
			n, err := srv.Read(buf)
			if n > 0 {
				time.Sleep(time.Duration(held.Swap(0)))
				if _, err := c.Write(buf[:n]); err != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	r := bufio.NewReader(c)
	// read returns the next message, whole, and its body.
	read := func(typed bool) (msg, body []byte, err error) {
		n := 4
		if typed {
			n = 5
		}
		msg = make([]byte, n)
		if _, err := io.ReadFull(r, msg); err != nil {
			return nil, nil, err
		}
		body = make([]byte, binary.BigEndian.Uint32(msg[n-4:])-4)
		if _, err := io.ReadFull(r, body); err != nil {
			return nil, nil, err
		}
		return append(msg, body...), body, nil
	}
	// The startup message has no type; an SSL or GSS request before it
	// is answered with one byte, which the copy above forwards.
	for {
		msg, body, err := read(false)
		if err != nil {
			return
		}
		if _, err := srv.Write(msg); err != nil {
			return
		}
		if code := binary.BigEndian.Uint32(body); code != 80877103 && code != 80877104 {
			break
		}
	}
	cstrings := func(b []byte) []string { return strings.Split(string(b), "\x00") }
	statements := map[string]string{}
	trip := ""
	for {
		msg, body, err := read(true)
		if err != nil {
			return
		}
		end := false
		switch msg[0] {
		case 'Q':
			trip, end = cstrings(body)[0], true
		case 'P': // Parse: name, SQL, ...
			f := cstrings(body)
			statements[f[0]] = f[1]
			if trip == "" {
				trip = f[1]
			}
		case 'B': // Bind: portal, statement, ...
			if f := cstrings(body); trip == "" {
				trip = statements[f[1]]
			}
		case 'S':
			end = true
		}
		if end {
			d := p.record(trip)
			trip = ""
			time.Sleep(d.request)
			held.Store(int64(d.answer))
		}
		if _, err := srv.Write(msg); err != nil {
			return
		}
	}
}

// record records a round trip of sql, and returns how long to hold it.
func (p *proxy) record(sql string) delay {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.trips = append(p.trips, sql)
	return p.slow[sql]
}

// since returns the round trips made after the first n.
func (p *proxy) since(n int) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.trips[n:]...)
}

// count returns how many round trips were made.
func (p *proxy) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.trips)
}

// reset ends every client's connection with a reset (RST), as a network
// that dropped them would, the server's end left to find out.
func (p *proxy) reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.SetLinger(0)
		c.Close()
	}
	p.conns = nil
}
