package adapt

// Order records the order in which the items of a response came (its
// blocks, parts or output items), for an adapter to send them back in it
// with [Replay]. Each item has a key, what the recorded order names it by,
// and a rank, its place in the adapter's default layout (Anthropic's:
// thinking 0, then text 1, then tool use 2). The zero Order is empty.
type Order struct {
	keys  []any
	last  int  // the rank of the item before
	moved bool // an item came before one of a lower rank
	whole bool // an item is kept whole
}

// Add records an item of rank under key.
func (o *Order) Add(key string, rank int) {
	o.Skip(rank)
	o.keys = append(o.keys, key)
}

// AddWhole records under key an item the message keeps whole (its JSON, in
// its Metadata), which has no place in the layout: only the recorded order
// puts it back, so with one the order is always recorded.
func (o *Order) AddWhole(key string) {
	o.whole = true
	o.keys = append(o.keys, key)
}

// Skip notes an item of rank that the message does not keep: it takes no
// place in the order, but counts for the layout.
func (o *Order) Skip(rank int) {
	if rank < o.last {
		o.moved = true
	}
	o.last = rank
}

// Keys returns the order to record in the message's Metadata, as a JSON
// round trip of it leaves it ([]any of strings), or nil when there is no
// need: the items came in the default layout (each of a rank no lower than
// the one before) and none is kept whole. The slice is the caller's.
func (o *Order) Keys() []any {
	if !o.moved && !o.whole {
		return nil
	}
	return o.keys
}

// Recorded returns the entries of v, an order as a message's Metadata holds
// it: each string of a []any as it is, and any other value as "", which
// names nothing; nil when v is not a []any.
func Recorded(v any) []string {
	list, _ := v.([]any)
	if list == nil {
		return nil
	}
	out := make([]string, len(list))
	for i, e := range list {
		out[i], _ = e.(string)
	}
	return out
}

// A Slot is an item of a message to send, and the key a recorded order
// names it by. A kind's key ("text", "thinking": Kind is true) names the
// slots of the kind in turn: the n-th time the order names it, the n-th
// slot of the kind. Any other key (an ID) names every slot it has at once,
// where the order first names it. An empty key names nothing.
type Slot[T any] struct {
	Item T
	Key  string
	Kind bool
}

// Replay returns the items of slots, which come in the adapter's default
// layout, in the order recorded: order's entries in turn, each putting in
// its place the slots it names that no entry before it put; then the slots
// no entry names, in their layout. An entry that names no slot puts there
// the item whole returns for it, when ok: an item the message keeps whole,
// which only the order puts back, once for each entry that names it (whole
// may be nil). An error of whole stops the replay and is returned. With no
// order, the items come in their layout. Replay changes neither order nor
// slots.
func Replay[T any](order []string, slots []Slot[T], whole func(entry string) (item T, ok bool, err error)) ([]T, error) {
	byKey := map[string][]int{} // the slots of each key, in their layout
	kind := map[string]bool{}
	for i, s := range slots {
		if s.Key != "" {
			byKey[s.Key] = append(byKey[s.Key], i)
			kind[s.Key] = kind[s.Key] || s.Kind
		}
	}
	out := make([]T, 0, len(slots))
	placed := make([]bool, len(slots))
	named := map[string]int{} // the times the order named each kind so far
	for _, e := range order {
		idx := byKey[e]
		switch {
		case e == "":
		case len(idx) == 0:
			if whole == nil {
				continue
			}
			item, ok, err := whole(e)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, item)
			}
		case kind[e]:
			if n := named[e]; n < len(idx) {
				out, placed[idx[n]] = append(out, slots[idx[n]].Item), true
			}
			named[e]++
		default:
			for _, i := range idx {
				if !placed[i] {
					out, placed[i] = append(out, slots[i].Item), true
				}
			}
		}
	}
	for i, s := range slots {
		if !placed[i] {
			out = append(out, s.Item)
		}
	}
	return out, nil
}
