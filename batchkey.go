package nous

import (
	"crypto/rand"
	"encoding/base64"
)

// endBatch ends the batch a save is about to send with its batch event
// ([EventBatch]), of the key [Context.SetBatchKey] gave, or a random one.
// A log that ends with a batch event c has not saved already (a save that
// failed, retried with nothing new) keeps it, when its key is the one
// asked for or any will do: the retry is the same batch, byte for byte,
// which is how a store that kept it is seen to have.
func (c *Context) endBatch() error {
	key := c.persist.batchKey
	if head := c.log.len(); head > c.persist.synced.head {
		if r := c.log.rec(head); r.typ == EventBatch {
			if keys, _ := batchKeys(r.typ, r.data); len(keys) == 1 && (key == "" || keys[0] == key) {
				return nil
			}
		}
	}
	if key == "" {
		var random [16]byte
		if _, err := rand.Read(random[:]); err != nil {
			return err
		}
		key = base64.RawURLEncoding.EncodeToString(random[:]) // 22 characters
	}
	c.addQuiet(&record{typ: EventBatch, at: now(), data: map[string]any{DataKeys: []any{key}}})
	return nil
}

// observeFrom passes the events of c's log after seq from to the Observer.
func (c *Context) observeFrom(from int64) {
	if c.Observer == nil {
		return
	}
	for seq := from + 1; seq <= c.log.len(); seq++ {
		c.Observer(c.log.shared(seq))
	}
}

// batchUndo is what a save that failed for sure takes back: the log and
// the record of the deps as they were before it appended its events.
type batchUndo struct {
	log  eventLog
	deps depsRecord
}

// undo takes back the events a save that failed for sure appended to c's
// log: c is as it was. The record of the deps goes back with them, its
// lists (whose spare room the events' fold may have written) dropped.
func (c *Context) undo(u *batchUndo) {
	c.log, c.depsRec = u.log, u.deps
	c.depsRec.lists = nil
}
