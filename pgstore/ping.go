package pgstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// ShouldPing is a pgxpool.Config.ShouldPing that pings a connection taken
// from the pool only when the server ended it, or sent it something, while
// it sat idle: a restart of the server, pg_terminate_backend or
// idle_session_timeout leaves the server's last message (an error that
// ends the session) and the end of the stream on the socket, which one
// read of the socket that neither blocks nor takes anything from it sees.
// The ping then fails and the pool takes another connection, so that no
// save fails for a connection that was dead before it began. Open's pool
// uses it.
//
// pgx's default pings every connection idle for more than a second before
// use: a round trip more for each save that follows a pause (a model's
// call, say). Set ShouldPing in the config of a pool given to [New] to
// save in one round trip after a pause too.
//
// A connection whose server went without a word (a machine or a network
// that failed silently) looks alive: a save on it fails once the system
// gives up on the connection, or its context is done, as it would after a
// ping that passed. Where the socket cannot be read so (on a system other
// than Linux, macOS and the BSDs, or a connection that is not a TCP or
// Unix socket), ShouldPing is pgx's default.
func ShouldPing(ctx context.Context, p pgxpool.ShouldPingParams) bool {
	// The socket is read directly only once pgconn neither holds bytes it
	// read nor reads in the background (as it may after a slow write):
	// SyncConn makes sure, with a ping in that rare case.
	conn := p.Conn.PgConn()
	if err := conn.SyncConn(ctx); err != nil {
		return true // that ping failed: the pool's fails too, and drops the connection
	}
	spoke, ok := serverSpoke(conn.Conn())
	if !ok {
		return p.IdleDuration > time.Second
	}
	return spoke
}
