// Package filestore is the embedded [nous.Store]: a directory with one file
// per log, appended one frame per save, each frame with a length and a
// checksum, and fsynced before a save returns.
//
// Any number of processes may open one directory (on Linux, macOS and the
// BSDs; on Windows, and on systems without flock, one process at a time:
// [ErrLocked] for another). A log is locked, by an flock of its file, only
// while a process writes it: processes serving different sessions never
// wait on each other, and two saving one session behave as two replicas of
// a database do: one save wins, the other gets [nous.ErrConflict]. Each
// process keeps what it read of a log and checks the file (one stat) on
// each use, so it sees the other processes' saves; [Store.Watch] sees them
// within [PollInterval].
//
// A crash in the middle of a save leaves a torn last frame, which the next
// writer of the log cuts off: the log holds every save that returned nil.
// Damage anywhere else is an error wrapping [nous.ErrCorrupt]. Files an
// earlier version of the package wrote are read, and rewritten in the
// current format at their next save; one that keeps batch keys apart from
// the events (version 4) is rewritten the first time the store uses it,
// its keys moved into a batch event that ends its log ([nous.EventBatch]),
// so that [nous.Context.HasBatch] knows them. Names are kept in a
// subdirectory, names/, one file per name. FORMAT.md specifies the files.
package filestore
