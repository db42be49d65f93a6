package filestore

import "os"

// entry is a log the store has read: what its file holds, or why it cannot
// be used.
type entry struct {
	bytes int64 // about what it holds in memory, as last counted
	file  logFile
	stat  os.FileInfo // the file it read (os.SameFile tells another one under its name)
	// pin is that file, open while the entry is kept where processes share
	// a directory: a file replaced (rewritten, or deleted and made again)
	// and removed keeps its inode while it is open, so another file cannot
	// take the same inode and pass for it.
	pin      *os.File
	seen     int64       // the file's size when it was last read: its whole frames, and a torn frame being written
	f        file        // the log file open for appending, after its first append
	fstat    os.FileInfo // the file f is
	poisoned error       // a write or fsync failed: the file's end is unknown until Open again
	// writing says a save writes f without s.mu: what would close f or
	// pin waits for it (closeF, closeAll), and the save closes them.
	writing, closeF, closeAll bool
}

// close closes e's file, if it is open; once its save is done, when one
// writes it.
func (e *entry) close() {
	if e.writing {
		e.closeF = true
		return
	}
	if e.f != nil {
		e.f.Close()
		e.f = nil
	}
}

// release closes e's files, the one that pins it included; once its save
// is done, when one writes it.
func (e *entry) release() {
	if e.writing {
		e.closeAll = true
		return
	}
	e.close()
	e.repin(nil)
}

// written ends the write of e's file: the files that were to be closed
// meanwhile are closed now.
func (e *entry) written() {
	e.writing = false
	if e.closeAll {
		e.release()
	} else if e.closeF {
		e.close()
	}
	e.closeF, e.closeAll = false, false
}

// repin makes f the file that pins e, closing the one before.
func (e *entry) repin(f *os.File) {
	if e.pin != nil {
		e.pin.Close()
	}
	e.pin = f
}

// pinned returns f, to pin an entry with, where processes share a
// directory; elsewhere it closes f and returns nil.
func pinned(f *os.File) *os.File {
	if !shared {
		f.Close()
		return nil
	}
	return f
}
