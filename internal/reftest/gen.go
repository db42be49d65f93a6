package reftest

import "strconv"

// Source is where a [Gen] takes its choices: a *rand.Rand, or [Bytes] for a
// fuzz target.
type Source interface{ IntN(n int) int }

// Bytes is a Source that reads fuzz input: IntN(n) is the next byte modulo
// n, and 0 once the input is used up, so that every input decodes.
type Bytes []byte

// IntN returns the next byte modulo n and consumes it.
func (b *Bytes) IntN(n int) int {
	if len(*b) == 0 {
		return 0
	}
	c := (*b)[0]
	*b = (*b)[1:]
	return int(c) % n
}

// Gen makes random deps and operations.
type Gen struct {
	Src     Source
	Keys    []string // the deps keys operations touch
	SubKeys []string // the keys of nested maps
	Events  []string // the types of log events
	// JSON makes only values whose JSON round trip is exact: no typed
	// slices or maps, no whole floats, no nil maps or lists.
	JSON bool
}

func (g *Gen) n(k int) int    { return g.Src.IntN(k) }
func (g *Gen) key() string    { return g.Keys[g.n(len(g.Keys))] }
func (g *Gen) subKey() string { return g.SubKeys[g.n(len(g.SubKeys))] }

// Value returns a value nested at most depth levels: scalars, nil, lists
// (with spare capacity now and then) and maps, and unless JSON, typed
// slices and maps, nil ones included.
func (g *Gen) Value(depth int) any {
	k := 13
	switch {
	case depth <= 0:
		k = 5
	case g.JSON:
		k = 9
	}
	switch g.n(k) {
	case 0:
		return g.n(10)
	case 1:
		return "s" + strconv.Itoa(g.n(10))
	case 2:
		return float64(g.n(10)) + 0.5
	case 3:
		return g.n(2) == 0
	case 4:
		return nil
	case 5, 6:
		items := make([]any, g.n(3))
		for i := range items {
			items[i] = g.Value(depth - 1)
		}
		return Spare(g.n(3), items...)
	case 7, 8:
		return g.Map(depth - 1)
	case 9:
		s := make([]string, g.n(3), 4)
		for i := range s {
			s[i] = "t" + strconv.Itoa(i)
		}
		return s
	case 10:
		return []int{g.n(5)}
	case 11:
		return [...]any{[]string(nil), map[string]any(nil), []any(nil)}[g.n(3)]
	}
	return map[string]int{"n": g.n(5)}
}

// Map returns a map of up to three values, a third of them maps, nested at
// most depth levels.
func (g *Gen) Map(depth int) map[string]any {
	m := make(map[string]any)
	for range g.n(4) {
		if depth > 0 && g.n(3) == 0 {
			m[g.subKey()] = g.Map(depth - 1)
		} else {
			m[g.subKey()] = g.Value(depth)
		}
	}
	return m
}

// Initial returns deps to start from, nil now and then, in which one map is
// sometimes reachable from two keys.
func (g *Gen) Initial() map[string]any {
	if g.n(10) == 0 {
		return nil
	}
	m := map[string]any{}
	for range g.n(5) {
		m[g.key()] = g.Value(3)
	}
	if v, ok := m[g.Keys[0]].(map[string]any); ok && v != nil && g.n(2) == 0 {
		m[g.Keys[len(g.Keys)-1]] = v
	}
	return m
}

// Op returns a random operation on deps: of any kind, on any key; an append
// usually brings an item the list at the key takes, but may meet a value
// that is not a list, and fail.
func (g *Gen) Op(deps map[string]any) Op {
	switch k := g.n(20); {
	case k < 7:
		key := g.key()
		item := g.Value(2)
		if g.n(10) != 0 {
			switch deps[key].(type) {
			case []string:
				item = "i" + strconv.Itoa(g.n(10))
			case []int:
				item = g.n(10)
			}
		}
		return Op{Kind: Append, Key: key, Value: item}
	case k < 12:
		op := Op{Kind: Merge, Key: g.key()}
		if g.n(15) > 0 {
			op.Value = g.Map(3)
		}
		return op
	case k < 15:
		return Op{Kind: Set, Key: g.key(), Value: g.Value(3)}
	case k < 18:
		return Op{Kind: Delete, Key: g.key()}
	}
	return Op{Kind: Log, Event: g.Events[g.n(len(g.Events))], Data: g.Map(1)}
}

// Program returns initial deps, 1 to max operations over them that stop at
// the first that fails, and where to split them in two.
func (g *Gen) Program(max int) (initial map[string]any, ops []Op, split int) {
	initial = g.Initial()
	state, _ := Reduce(initial, nil)
	for range 1 + g.n(max) {
		op := g.Op(state)
		ops = append(ops, op)
		next, failAt := Reduce(state, []Op{op})
		if failAt >= 0 {
			break // what follows a failure never runs
		}
		state = next
	}
	return initial, ops, g.n(len(ops) + 1)
}

// Failing returns operations that end with an append that fails on deps:
// onto a value there that is not a list, or onto a key first set to one.
func (g *Gen) Failing(deps map[string]any) []Op {
	var keys []string
	for _, k := range g.Keys {
		if _, failAt := Reduce(deps, []Op{{Kind: Append, Key: k}}); failAt >= 0 {
			keys = append(keys, k)
		}
	}
	item := g.Value(1)
	if len(keys) == 0 || g.n(3) == 0 {
		key := g.key()
		scalars := []any{"text", 7, false, 0.5, map[string]any{"x": []any{1}}}
		return []Op{{Kind: Set, Key: key, Value: scalars[g.n(len(scalars))]}, {Kind: Append, Key: key, Value: item}}
	}
	return []Op{{Kind: Append, Key: keys[g.n(len(keys))], Value: item}}
}
