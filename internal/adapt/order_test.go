package adapt_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/nous-go/nous/internal/adapt"
)

func TestOrderKeys(t *testing.T) {
	type step struct {
		key   string
		rank  int
		whole bool
		skip  bool
	}
	for _, tt := range []struct {
		name  string
		steps []step
		want  []any
	}{
		{"empty", nil, nil},
		{"in layout", []step{{key: "thinking"}, {key: "text", rank: 1}, {key: "call:a", rank: 2}, {key: "call:b", rank: 2}}, nil},
		{"ranks repeated", []step{{key: "text", rank: 1}, {key: "text", rank: 1}}, nil},
		{"an item before one of a lower rank", []step{{key: "text", rank: 1}, {key: "thinking"}}, []any{"text", "thinking"}},
		{"moved back into layout later", []step{{key: "thinking"}, {key: "text", rank: 1}, {key: "thinking"}, {key: "text", rank: 1}},
			[]any{"thinking", "text", "thinking", "text"}},
		{"an item kept whole", []step{{key: "text", rank: 1}, {key: "part:0", whole: true}}, []any{"text", "part:0"}},
		{"a skipped item counts for the layout", []step{{key: "msg_1", rank: 2}, {rank: 1, skip: true}}, []any{"msg_1"}},
		{"a skipped item in layout", []step{{rank: 1, skip: true}, {key: "msg_1", rank: 2}}, nil},
		{"an empty key is recorded", []step{{key: "", rank: 2}, {key: "call_1", rank: 1}}, []any{"", "call_1"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var o adapt.Order
			for _, s := range tt.steps {
				switch {
				case s.whole:
					o.AddWhole(s.key)
				case s.skip:
					o.Skip(s.rank)
				default:
					o.Add(s.key, s.rank)
				}
			}
			if got := o.Keys(); !slices.Equal(got, tt.want) || (got == nil) != (tt.want == nil) {
				t.Errorf("Keys() = %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestRecorded(t *testing.T) {
	for _, tt := range []struct {
		name string
		v    any
		want []string
	}{
		{"nil", nil, nil},
		{"not a list", "text", nil},
		{"strings a Go caller set", []string{"text"}, nil},
		{"empty", []any{}, []string{}},
		{"entries", []any{"text", 1.0, nil, "", []any{"x"}, "call:a"}, []string{"text", "", "", "", "", "call:a"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := adapt.Recorded(tt.v); !slices.Equal(got, tt.want) || (got == nil) != (tt.want == nil) {
				t.Errorf("Recorded(%#v) = %#v, want %#v", tt.v, got, tt.want)
			}
		})
	}
}

// layout returns the slots a layout string describes: comma-separated
// keys, a kind's marked with a leading "#"; each slot's item is its key and
// its index.
func layout(s string) []adapt.Slot[string] {
	var slots []adapt.Slot[string]
	if s == "" {
		return nil
	}
	for i, k := range strings.Split(s, ",") {
		key, kind := strings.CutPrefix(k, "#")
		slots = append(slots, adapt.Slot[string]{Item: key + "/" + strconv.Itoa(i), Key: key, Kind: kind})
	}
	return slots
}

var errWhole = errors.New("a kept item that does not decode")

// whole puts back an item kept whole for each entry "whole:...", refuses
// "bad:...", and finds nothing for any other entry.
func whole(e string) (string, bool, error) {
	switch {
	case strings.HasPrefix(e, "whole:"):
		return e, true, nil
	case strings.HasPrefix(e, "bad:"):
		return "", false, errWhole
	}
	return "", false, nil
}

func TestReplay(t *testing.T) {
	for _, tt := range []struct {
		name   string
		order  []string
		layout string
		want   string // the items, space-separated, or the error
	}{
		{"no order", nil, "#thinking,#text,call:a", "thinking/0 text/1 call:a/2"},
		{"an empty order", []string{}, "#thinking,#text,call:a", "thinking/0 text/1 call:a/2"},
		{"a kind's slots in turn", []string{"text", "thinking", "text", "thinking"}, "#thinking,#thinking,#text,#text",
			"text/2 thinking/0 text/3 thinking/1"},
		{"a kind named more often than it has slots", []string{"text", "text", "text", "call:a"}, "#text,call:a", "text/0 call:a/1"},
		{"the first place of a key counts", []string{"call:a", "text", "call:a"}, "#text,call:a", "call:a/1 text/0"},
		{"every slot of a key at its first place", []string{"call:a", "msg"}, "msg,msg,call:a", "call:a/2 msg/0 msg/1"},
		{"slots the order does not name after, in layout", []string{"c"}, "a,b,c,#text", "c/2 a/0 b/1 text/3"},
		{"an empty key names nothing", []string{"", "call:a"}, ",call:a", "call:a/1 /0"},
		{"an item kept whole for each entry that names it", []string{"whole:0", "text", "whole:0", "whole:9x"}, "#text",
			"whole:0 text/0 whole:0 whole:9x"},
		{"an entry that names nothing", []string{"unknown", "call:b", "text"}, "call:a,#text", "text/1 call:a/0"},
		{"a kind without slots names nothing", []string{"thinking", "text"}, "#text", "text/0"},
		{"a kept item that does not decode", []string{"text", "bad:0"}, "#text", "error"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			slots := layout(tt.layout)
			before, order := slices.Clone(slots), slices.Clone(tt.order)
			got, err := adapt.Replay(tt.order, slots, whole)
			switch {
			case tt.want == "error":
				if !errors.Is(err, errWhole) || got != nil {
					t.Errorf("Replay: %q, %v; want the error of the kept item", got, err)
				}
			case err != nil:
				t.Fatalf("Replay: %v", err)
			case strings.Join(got, " ") != tt.want:
				t.Errorf("Replay: %s, want %s", strings.Join(got, " "), tt.want)
			}
			if !slices.Equal(slots, before) || !slices.Equal(tt.order, order) {
				t.Error("Replay changed its arguments")
			}
		})
	}
}

// Without whole, an entry that names no slot puts nothing.
func TestReplayWithoutWhole(t *testing.T) {
	got, err := adapt.Replay([]string{"whole:0", "b", "bad:1"}, layout("a,b"), nil)
	if err != nil || strings.Join(got, " ") != "b/1 a/0" {
		t.Errorf("Replay: %q, %v", got, err)
	}
}

// FuzzReplay: any order a message's Metadata holds (JSON), over any layout,
// replays without a panic; every slot comes once, and an item kept whole
// once for each entry that names it. The order of what a replay gave,
// recorded and read back through JSON, replays to it again (at once when
// no ID names two slots and no key is empty, else after one more replay).
func FuzzReplay(f *testing.F) {
	f.Add([]byte(`["text","thinking","text","thinking"]`), "#thinking,#thinking,#text,#text")
	f.Add([]byte(`["call:a","text","call:a"]`), "#text,call:a")
	f.Add([]byte(`["call:a","msg"]`), "msg,msg,call:a")
	f.Add([]byte(`["",1,null,"whole:0","whole:0",["x"]]`), ",#text,call:a")
	f.Add([]byte(`["bad:0"]`), "a")
	f.Add([]byte(`{"text":1}`), "a,b,a")
	f.Fuzz(func(t *testing.T, recorded []byte, l string) {
		var v any
		if json.Unmarshal(recorded, &v) != nil || !utf8.ValidString(l) {
			return // keys are text: a message's Metadata goes through JSON
		}
		var slots []adapt.Slot[item]
		for i, s := range layout(l) {
			slots = append(slots, adapt.Slot[item]{Item: item{slot: i}, Key: s.Key, Kind: s.Kind})
		}
		order := adapt.Recorded(v)
		got, err := adapt.Replay(order, slots, wholeItem)
		if err != nil {
			if !errors.Is(err, errWhole) {
				t.Fatalf("Replay: %v", err)
			}
			return
		}
		checkReplay(t, order, slots, got)
		again, err := adapt.Replay(orderOf(t, slots, got), slots, wholeItem)
		if err != nil {
			t.Fatalf("replaying a replay's order: %v", err)
		}
		if simple(slots) && !slices.Equal(again, got) {
			t.Fatalf("a replay's order replays to %v, not %v", again, got)
		}
		if fixed, _ := adapt.Replay(orderOf(t, slots, again), slots, wholeItem); !slices.Equal(fixed, again) {
			t.Fatalf("replaying is not stable: %v, then %v", again, fixed)
		}
	})
}

// item is an item of FuzzReplay: a slot's index, or an item kept whole.
type item struct {
	slot  int
	whole string
}

// wholeItem is whole for FuzzReplay's items.
func wholeItem(e string) (item, bool, error) {
	_, ok, err := whole(e)
	return item{slot: -1, whole: e}, ok, err
}

// checkReplay checks that got, what order replayed of slots, has every slot
// once, and an item kept whole for each entry that names one.
func checkReplay(t *testing.T, order []string, slots []adapt.Slot[item], got []item) {
	t.Helper()
	has := map[string]bool{} // the keys of the slots
	for _, s := range slots {
		has[s.Key] = true
	}
	wholes := 0 // the items kept whole to come
	for _, e := range order {
		if _, ok, _ := whole(e); ok && !has[e] {
			wholes++
		}
	}
	seen := map[int]bool{}
	for _, it := range got {
		switch {
		case it.slot < 0:
			wholes--
		case seen[it.slot]:
			t.Fatalf("slot %d came twice: %v", it.slot, got)
		default:
			seen[it.slot] = true
		}
	}
	if len(seen) != len(slots) || wholes != 0 {
		t.Fatalf("%d of %d slots came, and %d items kept whole too few: %v", len(seen), len(slots), wholes, got)
	}
}

// orderOf records the order of items, as an adapter would (a slot's rank
// its place in the layout), and reads it back from its JSON.
func orderOf(t *testing.T, slots []adapt.Slot[item], items []item) []string {
	t.Helper()
	var o adapt.Order
	for _, it := range items {
		if it.slot < 0 {
			o.AddWhole(it.whole)
		} else {
			o.Add(slots[it.slot].Key, it.slot)
		}
	}
	b, err := json.Marshal(o.Keys())
	if err != nil {
		t.Fatal(err)
	}
	var back any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	return adapt.Recorded(back)
}

// simple reports whether no ID names two of slots and no key is empty.
func simple(slots []adapt.Slot[item]) bool {
	ids := map[string]int{} // the slots of each ID
	for _, s := range slots {
		if !s.Kind {
			ids[s.Key]++
		}
		if s.Key == "" || ids[s.Key] > 1 {
			return false
		}
	}
	return true
}
