package nous

import (
	"log/slog"
	"strconv"
	"testing"
)

// cuBytes decodes fuzz input into deps and operations. Running out of input
// reads zeros, so every input decodes.
type cuBytes struct{ b []byte }

func (r *cuBytes) next() byte {
	if len(r.b) == 0 {
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *cuBytes) key() string    { return cuKeys[int(r.next())%len(cuKeys)] }
func (r *cuBytes) subKey() string { return cuSubKeys[int(r.next())%len(cuSubKeys)] }

// value decodes one value: a kind byte, then what that kind needs.
func (r *cuBytes) value(depth int) any {
	k := int(r.next())
	if depth <= 0 {
		k %= 5
	}
	switch k % 13 {
	case 0:
		return int(int8(r.next()))
	case 1:
		return "s" + strconv.Itoa(int(r.next()%8))
	case 2:
		return float64(int8(r.next())) / 4
	case 3:
		return r.next()%2 == 0
	case 4:
		return nil
	case 5:
		items := make([]any, r.next()%4)
		for i := range items {
			items[i] = r.value(depth - 1)
		}
		return cuSpare(int(r.next()%3), items...)
	case 6:
		return r.mapValue(depth - 1)
	case 7:
		n := int(r.next() % 4)
		s := make([]string, n, n+int(r.next()%3))
		for i := range s {
			s[i] = "t" + strconv.Itoa(int(r.next()%8))
		}
		return s
	case 8:
		return []int{int(int8(r.next()))}
	case 9:
		return []string(nil)
	case 10:
		return map[string]any(nil)
	case 11:
		return []any(nil)
	default:
		return map[string]int{r.subKey(): int(r.next())}
	}
}

func (r *cuBytes) mapValue(depth int) map[string]any {
	m := map[string]any{}
	for range r.next() % 4 {
		m[r.subKey()] = r.value(depth)
	}
	return m
}

// decode returns the initial deps, up to 64 operations, and where to split
// them for Combine.
func (r *cuBytes) decode() (map[string]any, []Operation, int) {
	var initial map[string]any
	if n := r.next(); n != 255 {
		initial = map[string]any{}
		for range n % 5 {
			initial[r.key()] = r.value(3)
		}
	}
	split := int(r.next())
	var ops []Operation
	for len(r.b) > 0 && len(ops) < 64 {
		switch r.next() % 5 {
		case 0:
			ops = append(ops, Operation{Kind: OpSet, Key: r.key(), Value: r.value(3)})
		case 1:
			var m map[string]any
			key := r.key()
			if r.next()%8 != 0 {
				m = r.mapValue(3)
			}
			ops = append(ops, Operation{Kind: OpMerge, Key: key, Value: m})
		case 2:
			ops = append(ops, Operation{Kind: OpAppend, Key: r.key(), Value: r.value(2)})
		case 3:
			ops = append(ops, Operation{Kind: OpDelete, Key: r.key()})
		case 4:
			t := cuEvents[int(r.next())%len(cuEvents)]
			ops = append(ops, Operation{Kind: OpLogEvent, EventType: t, Data: r.mapValue(1)})
		}
	}
	if _, failAt := cuRefReduce(initial, ops); failAt >= 0 {
		ops = ops[:failAt+1] // what follows a failure never runs
	}
	return initial, ops, split % (len(ops) + 1)
}

// FuzzToDeps decodes operations from the input and checks every way of
// reducing them against the reference reducer of the differential test: no
// panic, the same result or the same failure, initial and the update
// unchanged.
func FuzzToDeps(f *testing.F) {
	old := slog.Default()
	slog.SetDefault(slog.New(slog.DiscardHandler)) // ApplyToRunContext warns of dropped events
	f.Cleanup(func() { slog.SetDefault(old) })

	// Seeds in the shape of the table cases: [initial keys, (key, value)...,
	// split, (op, key, value)...].
	for _, seed := range [][]byte{
		{},
		{0, 0, 2, 0, 1, 2, 0, 1, 3, 0, 2, 0, 4}, // append 1, append 2, delete, append
		{1, 0, 6, 2, 0, 4, 1, 0, 1, 0, 1, 1, 0, 6, 1},   // merge into a nested map
		{1, 0, 7, 2, 2, 1, 2, 1, 2, 0, 1, 7, 2, 0, 3},   // typed []string with spare capacity, appends
		{1, 1, 1, 3, 0, 2, 1, 0, 5},                     // append onto a string: mismatch
		{1, 2, 5, 1, 2, 0, 7, 0, 2, 2, 1, 2, 2, 0, 9},   // []any with spare capacity
		{255, 0, 4, 0, 5, 2, 1, 4, 0, 2, 3, 1, 2, 1, 3}, // nil initial, events, merge
		{2, 0, 10, 1, 9, 3, 2, 0, 1, 2, 1, 1, 2, 1, 8},  // nil map and nil []string
		{1, 3, 12, 0, 7, 0, 2, 3, 0, 4, 3, 1, 6, 1, 2},  // typed map, set, merge
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &cuBytes{b: data}
		initial, ops, split := r.decode()
		if err := cuCheck(initial, ops, split); err != nil {
			t.Fatalf("initial %#v\nops %#v\nsplit %d\n%v", initial, ops, split, err)
		}
	})
}
