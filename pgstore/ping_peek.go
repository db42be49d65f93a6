//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package pgstore

import (
	"net"
	"syscall"
)

// serverSpoke reports whether the server closed c, or sent on it bytes not
// yet read, with one read of its socket that does not block and takes
// nothing from it (MSG_PEEK); ok is false when c is not a socket it can
// read so. On a connection that sat idle in the pool, the server sends
// nothing until it ends the session.
func serverSpoke(c net.Conn) (spoke, ok bool) {
	if tc, isTLS := c.(interface{ NetConn() net.Conn }); isTLS {
		c = tc.NetConn()
	}
	sc, isSocket := c.(syscall.Conn)
	if !isSocket {
		return false, false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false, false
	}
	var buf [1]byte
	var rerr error
	if err := raw.Read(func(fd uintptr) bool {
		_, _, rerr = syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		return true // once, whatever it read: never wait
	}); err != nil {
		return true, true // the descriptor is closed
	}
	// Nothing to read is a live, silent connection; bytes (rerr nil, one
	// byte read), the end of the stream (rerr nil, none) or an error (a
	// reset, say) are the server's.
	return rerr != syscall.EAGAIN && rerr != syscall.EWOULDBLOCK, true
}
