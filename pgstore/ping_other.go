//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package pgstore

import "net"

// serverSpoke cannot read a socket without blocking on this system: ok is
// false, and [ShouldPing] is pgx's default.
func serverSpoke(net.Conn) (spoke, ok bool) { return false, false }
