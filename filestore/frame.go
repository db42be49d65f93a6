package filestore

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/google/uuid"

	"github.com/nous-go/nous"
)

// The on-disk format, version 5 (FORMAT.md, "The file store"): a log file
// starts with the 8 bytes of magic, then holds one frame per save:
//
//	length  uint32, big-endian: the number of bytes of the payload
//	lcrc    uint32, big-endian: CRC-32C (Castagnoli) of the 4 length bytes
//	crc     uint32, big-endian: CRC-32C of the payload
//	payload the batch
//
// and a payload is, all integers big-endian:
//
//	id [16]byte, parent [16]byte, fork seq int64, created at int64 (Unix ns),
//	incarnation [16]byte, after int64, head int64, updated at int64 (Unix ns),
//	name length uint32, name, label count uint32, then per label: key length uint32, key,
//	value length uint32, value (the log's name and labels in its first frame; none in the others),
//	state length uint32, state,
//	event count uint32, then per event: length uint32, the event's JSON.
//
// A file is rewritten, now and then, as one frame holding every event and
// the state of the last save (see rewrite). A batch's key is in the log
// itself, in the batch event that ends it ([nous.EventBatch]).
//
// Earlier versions are read, and rewritten in version 5 at their next
// save. Version 4 has a revision int64 (the number of saves the log holds
// once the frame is stored) between the head and the update time, and
// between the labels and the state the batch's key (length uint32, key)
// and marks (count uint32, then per mark: revision int64, head int64, key
// length uint32, key: in a rewritten first frame, of a revision past 1,
// the batches with a key it took in besides its own; none in the others).
// A file of version 4 whose frames hold keys is migrated before it is
// first given out (see migrate): the keys go into one batch event that
// ends its log. Version 3 is version 4 without the key and the marks;
// version 2 is version 3 without the name and labels. Version 1 has the
// layout of version 2 but for a section between the state and the events:
// the tool calls it kept apart (tool calls at uint32, tool call count
// uint32, then per call its length uint32 and its JSON, replacing the
// stored calls from that index); they are events once rewritten, as Load
// recorded them.
const (
	magic   = "NOUSLOG\x05"
	magicV4 = "NOUSLOG\x04"
	magicV3 = "NOUSLOG\x03"
	magicV2 = "NOUSLOG\x02"
	magicV1 = "NOUSLOG\x01"
)

// version is the format version this package writes.
const version = 5

const frameHeader = 12

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errTorn reports a frame cut short: the end of the file comes inside it.
var errTorn = errors.New("torn frame")

// errChecksum reports a payload that fails its checksum.
var errChecksum = errors.New("the payload fails its checksum")

// frame is one save, as a log file holds it.
type frame struct {
	info   nous.LogInfo
	after  int64
	state  []byte
	events []json.RawMessage
	// versions 1 to 4: the number of saves the log holds once the frame is
	// stored
	revision int64
	// version 4 only: the batch's key, and in a rewritten first frame the
	// marks of the batches it took in, its own but
	key   string
	marks []mark
	// version 1 only: the tool calls kept apart, from index callsAt on
	callsAt int
	calls   []json.RawMessage
}

// mark is what a rewritten first frame of version 4 holds of a batch with
// a key that it took in: the key, and the revision and head of the log
// once the batch was stored.
type mark struct {
	key            string
	revision, head int64
}

// maxPayload bounds a frame's payload, whose length is a uint32; a
// variable so that a test can lower it.
var maxPayload = int64(math.MaxUint32)

// checkFrame reports whether f can be written as a frame: its payload
// within maxPayload (so every length in it fits a uint32 too), and its
// times within the Unix nanoseconds an int64 holds (years 1678 to 2262).
func checkFrame(f *frame) error {
	if size := payloadSize(f, version); size > maxPayload {
		return fmt.Errorf("a batch of %d bytes (%d events), over the %d a frame holds: save more often: %w", size, len(f.events), maxPayload, ErrTooLarge)
	}
	for _, t := range []struct {
		name string
		at   time.Time
	}{{"created", f.info.CreatedAt}, {"updated", f.info.UpdatedAt}} {
		if t.at.Before(minTime) || t.at.After(maxTime) {
			return fmt.Errorf("the log's %s time %s is outside the years 1678 to 2262 a log file can hold", t.name, t.at)
		}
	}
	return nil
}

// The times a frame holds, as Unix nanoseconds in an int64.
var (
	minTime = time.Unix(0, math.MinInt64)
	maxTime = time.Unix(0, math.MaxInt64)
)

// payloadSize returns the bytes of the payload of f in a file of the
// given version.
func payloadSize(f *frame, version byte) int64 {
	size := int64(3*16 + 5*8 + 4 + len(f.state) + 4)
	if version < 5 {
		size += 8 // the revision
	}
	if version >= 3 {
		size += int64(labelsBytes(f))
	}
	if version == 4 {
		size += int64(4 + len(f.key) + 4)
		for _, m := range f.marks {
			size += int64(8 + 8 + 4 + len(m.key))
		}
	}
	if version == 1 {
		size += 8
	}
	for _, e := range f.events {
		size += 4 + int64(len(e))
	}
	for _, e := range f.calls {
		size += 4 + int64(len(e))
	}
	return size
}

// appendFrame appends the encoding of f, a frame of a file of the given
// version, to dst.
func appendFrame(dst []byte, f *frame, version byte) []byte {
	dst = slices.Grow(dst, frameHeader+int(payloadSize(f, version)))
	start := len(dst)
	dst = append(dst, make([]byte, frameHeader)...)
	dst = append(dst, f.info.ID[:]...)
	dst = append(dst, f.info.Parent[:]...)
	dst = binary.BigEndian.AppendUint64(dst, uint64(f.info.ForkSeq))
	dst = binary.BigEndian.AppendUint64(dst, uint64(f.info.CreatedAt.UnixNano()))
	dst = append(dst, f.info.Incarnation[:]...)
	dst = binary.BigEndian.AppendUint64(dst, uint64(f.after))
	dst = binary.BigEndian.AppendUint64(dst, uint64(f.info.Head))
	if version < 5 {
		dst = binary.BigEndian.AppendUint64(dst, uint64(f.revision))
	}
	dst = binary.BigEndian.AppendUint64(dst, uint64(f.info.UpdatedAt.UnixNano()))
	if version >= 3 {
		name, labels := "", []string(nil)
		if f.after == 0 { // the first frame: the log's
			name, labels = f.info.Name, sortedLabels(f.info.Labels)
		}
		dst = appendString(dst, name)
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(labels)/2))
		for _, s := range labels {
			dst = appendString(dst, s)
		}
	}
	if version == 4 {
		dst = appendString(dst, f.key)
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(f.marks)))
		for _, m := range f.marks {
			dst = binary.BigEndian.AppendUint64(dst, uint64(m.revision))
			dst = binary.BigEndian.AppendUint64(dst, uint64(m.head))
			dst = appendString(dst, m.key)
		}
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(f.state)))
	dst = append(dst, f.state...)
	if version == 1 { // Append keeps no calls apart: an empty list at index 0 drops those the file kept
		dst = binary.BigEndian.AppendUint32(dst, uint32(f.callsAt))
		dst = appendList(dst, f.calls)
	}
	dst = appendList(dst, f.events)
	payload := dst[start+frameHeader:]
	binary.BigEndian.PutUint32(dst[start:], uint32(len(payload)))
	binary.BigEndian.PutUint32(dst[start+4:], crc32.Checksum(dst[start:start+4], castagnoli))
	binary.BigEndian.PutUint32(dst[start+8:], crc32.Checksum(payload, castagnoli))
	return dst
}

// appendString appends s with its length.
func appendString(dst []byte, s string) []byte {
	return append(binary.BigEndian.AppendUint32(dst, uint32(len(s))), s...)
}

// sortedLabels returns labels as key, value, key, value, ..., by key.
func sortedLabels(labels map[string]string) []string {
	out := make([]string, 0, 2*len(labels))
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		out = append(out, k, labels[k])
	}
	return out
}

// labelsBytes returns the bytes the name and labels take in frame f.
func labelsBytes(f *frame) int {
	n := 4 + 4
	if f.after == 0 {
		n += len(f.info.Name)
		for k, v := range f.info.Labels {
			n += 8 + len(k) + len(v)
		}
	}
	return n
}

// appendList appends a count and each item with its length.
func appendList(dst []byte, items []json.RawMessage) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(items)))
	for _, e := range items {
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(e)))
		dst = append(dst, e...)
	}
	return dst
}

// readFrame decodes the frame at the start of b and returns it with its
// length in bytes. A frame that b ends inside, its length checked, is
// errTorn; a payload whose checksum fails is errChecksum; a wrong length or
// layout, another error.
func readFrame(b []byte, version byte) (frame, int, error) {
	if len(b) < frameHeader {
		return frame{}, 0, errTorn
	}
	if crc32.Checksum(b[:4], castagnoli) != binary.BigEndian.Uint32(b[4:]) {
		return frame{}, 0, errors.New("the frame's length fails its checksum")
	}
	n := int64(binary.BigEndian.Uint32(b))
	if int64(len(b)-frameHeader) < n {
		return frame{}, 0, errTorn
	}
	payload := b[frameHeader : frameHeader+n]
	if crc32.Checksum(payload, castagnoli) != binary.BigEndian.Uint32(b[8:]) {
		return frame{}, frameHeader + int(n), errChecksum
	}
	f, err := decodePayload(payload, version)
	return f, frameHeader + int(n), err
}

// decodePayload decodes a payload, of a file of the given version, whose
// checksum was checked.
func decodePayload(p []byte, version byte) (frame, error) {
	var f frame
	r := reader{b: p}
	copy(f.info.ID[:], r.next(16))
	copy(f.info.Parent[:], r.next(16))
	f.info.ForkSeq = r.int64()
	f.info.CreatedAt = unixNano(r.int64())
	copy(f.info.Incarnation[:], r.next(16))
	f.after = r.int64()
	f.info.Head = r.int64()
	if version < 5 {
		f.revision = r.int64()
	}
	f.info.UpdatedAt = unixNano(r.int64())
	if version >= 3 {
		f.info.Name = string(r.next(int(r.uint32())))
		for n := r.uint32(); n > 0 && r.err == nil; n-- {
			k := string(r.next(int(r.uint32())))
			v := string(r.next(int(r.uint32())))
			if f.info.Labels == nil {
				f.info.Labels = map[string]string{}
			}
			if _, dup := f.info.Labels[k]; dup && r.err == nil {
				r.err = fmt.Errorf("the label %q twice", k)
			}
			f.info.Labels[k] = v
		}
	}
	if version == 4 {
		f.key = string(r.next(int(r.uint32())))
		for n := r.uint32(); n > 0 && r.err == nil; n-- {
			m := mark{revision: r.int64(), head: r.int64()}
			m.key = string(r.next(int(r.uint32())))
			f.marks = append(f.marks, m)
		}
	}
	f.state = r.next(int(r.uint32()))
	if version == 1 {
		f.callsAt = int(r.uint32())
		f.calls = r.list()
	}
	f.events = r.list()
	switch {
	case r.err != nil:
		return frame{}, r.err
	case len(r.b) != 0:
		return frame{}, fmt.Errorf("%d bytes after the last event", len(r.b))
	case f.info.ID == uuid.Nil:
		return frame{}, errors.New("no log ID")
	case f.after < 0 || f.info.Head != f.after+int64(len(f.events)):
		return frame{}, fmt.Errorf("head %d after %d with %d events", f.info.Head, f.after, len(f.events))
	}
	return f, nil
}

func unixNano(n int64) time.Time { return time.Unix(0, n).UTC() }

// reader reads a payload; the first short read sets err and every read
// after it returns zeros.
type reader struct {
	b   []byte
	err error
}

func (r *reader) next(n int) []byte {
	if r.err != nil || n < 0 || n > len(r.b) {
		if r.err == nil {
			r.err = fmt.Errorf("a field of %d bytes where %d remain", n, len(r.b))
		}
		return nil
	}
	out := r.b[:n:n]
	r.b = r.b[n:]
	return out
}

// list reads a count and as many items, each with its length.
func (r *reader) list() []json.RawMessage {
	var items []json.RawMessage
	count := r.uint32()
	for i := uint32(0); i < count && r.err == nil; i++ {
		items = append(items, json.RawMessage(r.next(int(r.uint32()))))
	}
	return items
}

func (r *reader) uint32() uint32 {
	if b := r.next(4); b != nil {
		return binary.BigEndian.Uint32(b)
	}
	return 0
}

func (r *reader) int64() int64 {
	if b := r.next(8); b != nil {
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}

// logFile is what a log file holds: its frames, checked, in order, and the
// length of its good prefix.
type logFile struct {
	version  byte // of the file's format: 1 to 5
	info     nous.LogInfo
	revision int64 // versions 1 to 4: the last frame's, which the next one's follows
	state    []byte
	calls    []json.RawMessage // version 1: the tool calls kept apart
	frames   []frameAt         // where each frame starts and the seq it follows: events stay on disk
	good     int64             // bytes of the file that hold whole frames
	torn     bool              // the file goes on past good: a torn last frame
	events   int64             // the bytes the events take in frames: what a rewrite keeps of them
	// version 4: the keys of the batches, in the order they were stored
	// (a rewritten first frame's marks, then each frame's own key), and
	// the same as a set
	keys  []string
	keyed map[string]bool
}

// parseLog checks and decodes the content of a log file. A torn last frame
// is cut off (torn true): one the file ends inside, its length checked, one
// that ends the file with a payload failing its checksum, or zeros to the
// end of the file (a file system can make a file longer before it writes
// the bytes). Damage
// anywhere else is an error wrapping nous.ErrCorrupt that names the offset;
// so is a file without a whole first frame, as a log file appears whole
// (written aside, then renamed).
func parseLog(b []byte) (logFile, error) {
	lf := logFile{version: fileVersion(b)}
	if lf.version == 0 {
		return lf, fmt.Errorf("not a log file of version 1 to 5 (it starts %q): %w", b[:min(len(b), len(magic))], nous.ErrCorrupt)
	}
	lf.good = int64(len(magic))
	if err := lf.extend(b[len(magic):], lf.good); err != nil {
		return lf, err
	}
	return lf, nil
}

// fileVersion returns the version of the log file that starts with b, by
// its magic; 0 for none.
func fileVersion(b []byte) byte {
	if len(b) < len(magic) {
		return 0
	}
	switch string(b[:len(magic)]) {
	case magic:
		return 5
	case magicV4:
		return 4
	case magicV3:
		return 3
	case magicV2:
		return 2
	case magicV1:
		return 1
	}
	return 0
}

// extend adds the frames of b, the bytes of the file from offset base
// (lf.good: where its whole frames end) on, to lf. A torn last frame (one
// a crash, or a writer still writing, cut short) is left out, and marked
// with lf.torn: the next writer, holding the log's lock, cuts it. A torn
// first frame is damage: a log file appears whole, by a rename.
func (lf *logFile) extend(b []byte, base int64) error {
	lf.torn = false
	for off := int64(0); off < int64(len(b)); {
		f, n, err := readFrame(b[off:], lf.version)
		last := errors.Is(err, errTorn) || (errors.Is(err, errChecksum) && off+int64(n) == int64(len(b))) ||
			(err != nil && zeros(b[off:])) // the file grew before its bytes were written
		if last && base+off > int64(len(magic)) {
			lf.torn = true // the last frame: cut short
			return nil
		}
		if err != nil {
			return fmt.Errorf("frame at offset %d: %v: %w", base+off, err, nous.ErrCorrupt)
		}
		if err := lf.add(&f, base+off); err != nil {
			return fmt.Errorf("frame at offset %d: %v: %w", base+off, err, nous.ErrCorrupt)
		}
		off += int64(n)
		lf.good = base + off
	}
	return nil
}

// frameAt is where a frame of a log file starts, and the seq it follows.
type frameAt struct {
	off   int64
	after int64
}

// add appends frame f, which starts at offset off, to lf, checking that it
// continues it.
func (lf *logFile) add(f *frame, off int64) error {
	if err := lf.follows(f); err != nil {
		return err
	}
	if f.callsAt > len(lf.calls) {
		return fmt.Errorf("tool calls from %d of %d", f.callsAt, len(lf.calls))
	}
	if err := lf.addKeys(f); err != nil {
		return err
	}
	for _, e := range f.events {
		lf.events += 4 + int64(len(e))
	}
	if lf.info.ID == uuid.Nil {
		lf.info = f.info
	}
	lf.info.Head, lf.info.UpdatedAt, lf.revision = f.info.Head, f.info.UpdatedAt, f.revision
	lf.state = f.state
	lf.calls = append(lf.calls[:f.callsAt], f.calls...) // nothing else holds lf.calls
	lf.frames = append(lf.frames, frameAt{off, f.after})
	return nil
}

// follows checks that frame f continues lf. A first frame starts after
// seq 0; in a file of an earlier version, at revision 1, or (version 4) at
// a later one when it is a rewrite, with marks in order. A later frame is
// of the same log and incarnation, after lf's head, without marks; in a
// file of an earlier version, of the next revision.
func (lf *logFile) follows(f *frame) error {
	old := lf.version < 5
	if lf.info.ID == uuid.Nil {
		if f.after != 0 || old && (f.revision < 1 || f.revision > 1 && lf.version < 4) {
			return fmt.Errorf("the first frame starts after seq %d, at revision %d", f.after, f.revision)
		}
		return checkMarks(f)
	}
	if len(f.marks) > 0 {
		return fmt.Errorf("marks of %d batches in a frame after seq %d", len(f.marks), f.after)
	}
	if f.info.ID != lf.info.ID || f.info.Incarnation != lf.info.Incarnation || f.after != lf.info.Head || old && f.revision != lf.revision+1 {
		return fmt.Errorf("a frame of log %s (incarnation %s) after seq %d, revision %d, in log %s (incarnation %s) at seq %d, revision %d",
			f.info.ID, f.info.Incarnation, f.after, f.revision, lf.info.ID, lf.info.Incarnation, lf.info.Head, lf.revision)
	}
	return nil
}

// checkMarks checks the marks of f, a first frame: keys given once, not
// f's own, revisions rising before f's, heads not falling up to f's.
func checkMarks(f *frame) error {
	keys := make(map[string]bool, len(f.marks))
	rev, head := int64(0), int64(0)
	for i, m := range f.marks {
		switch {
		case m.key == "" || keys[m.key] || m.key == f.key:
			return fmt.Errorf("mark %d: the batch key %.40q empty or twice", i, m.key)
		case m.revision <= rev || m.revision >= f.revision || m.head < head || m.head > f.info.Head:
			return fmt.Errorf("mark %d: revision %d, head %d, after revision %d, head %d, in a frame of revision %d, head %d",
				i, m.revision, m.head, rev, head, f.revision, f.info.Head)
		}
		keys[m.key] = true
		rev, head = m.revision, m.head
	}
	return nil
}

// addKeys adds the batch keys of f, a frame of a file of version 4, to
// lf's: its marks', then its own. A key twice is damage, and so is one
// [nous.CheckKey] refuses: the store checked every key it kept, and each
// goes into an event of the log once the file is migrated.
func (lf *logFile) addKeys(f *frame) error {
	add := func(k string) error {
		if lf.keyed[k] {
			return fmt.Errorf("the batch key %.40q twice", k)
		}
		if err := nous.CheckKey(k); err != nil {
			return err
		}
		if lf.keyed == nil {
			lf.keyed = map[string]bool{}
		}
		lf.keyed[k] = true
		lf.keys = append(lf.keys, k)
		return nil
	}
	for _, m := range f.marks {
		if err := add(m.key); err != nil {
			return err
		}
	}
	if f.key == "" {
		return nil
	}
	return add(f.key)
}

// eventsAfter returns the events after seq after of the log lf describes,
// read from r, its file: from the frame that holds seq after+1 to the end
// of the whole frames. It checks every frame it reads again.
func (lf *logFile) eventsAfter(r io.ReaderAt, after int64) ([]json.RawMessage, error) {
	if after >= lf.info.Head {
		return nil, nil
	}
	k := sort.Search(len(lf.frames), func(i int) bool { return lf.frames[i].after > after }) - 1
	start := lf.frames[max(k, 0)].off
	b := make([]byte, lf.good-start)
	if _, err := r.ReadAt(b, start); err != nil {
		return nil, err
	}
	events := make([]json.RawMessage, 0, lf.info.Head-after)
	for off := 0; off < len(b); {
		f, n, err := readFrame(b[off:], lf.version)
		if err != nil {
			return nil, fmt.Errorf("frame at offset %d: %v: %w", start+int64(off), err, nous.ErrCorrupt)
		}
		for i, e := range f.events {
			if f.after+int64(i) >= after {
				events = append(events, e)
			}
		}
		off += n
	}
	if int64(len(events)) != lf.info.Head-after {
		return nil, fmt.Errorf("%d events after seq %d, head %d: %w", len(events), after, lf.info.Head, nous.ErrCorrupt)
	}
	return events, nil
}

// zeros reports whether b holds only zero bytes.
func zeros(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// stateWithCalls returns the state document of lf as a reader gets it: a
// file of version 1 that keeps tool calls apart gives them in the state's
// tool_calls, where Load records them as events.
func (lf *logFile) stateWithCalls() []byte {
	state := bytes.TrimRight(lf.state, " \t\r\n")
	if len(lf.calls) == 0 || len(state) < 2 || state[len(state)-1] != '}' {
		return bytes.Clone(lf.state)
	}
	body := bytes.TrimSpace(state[1 : len(state)-1])
	out := append([]byte(nil), state[:len(state)-1]...)
	if len(body) > 0 {
		out = append(out, ',')
	}
	out = append(out, `"tool_calls":[`...)
	for i, c := range lf.calls {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, c...)
	}
	return append(out, "]}"...)
}
