package jsonx_test

import (
	"reflect"
	"testing"

	"github.com/nous-go/nous/internal/jsonx"
)

type named map[string]any

// A value that holds itself, many times over and through every kind of
// container, is copied into one that holds itself (under the root, which
// is copied apart), and nothing of it is the original's.
func TestCloneCycles(t *testing.T) {
	m := map[string]any{"x": 1}
	for _, k := range []string{"a", "b", "c", "d"} {
		m[k] = m // each level would double without cycle detection
	}
	l := make([]any, 3)
	l[0], l[1], l[2] = l, m, "s"
	m["list"] = l
	n := named{"self": nil}
	n["self"] = n
	m["named"] = n
	typed := map[string][]any{"l": nil}
	typed["l"] = []any{typed}
	m["typed"] = typed

	c := jsonx.CloneMap(m)
	ptr := func(v any) uintptr { return reflect.ValueOf(v).Pointer() }
	if ptr(c) == ptr(m) {
		t.Fatal("the copy is the original")
	}
	for _, k := range []string{"a", "b", "c", "d"} {
		inner := c[k].(map[string]any)
		if ptr(inner) == ptr(m) || ptr(inner) == ptr(c) || ptr(inner["a"]) != ptr(inner) || ptr(inner["d"]) != ptr(inner) {
			t.Errorf("c[%q] is not a copy that holds itself", k)
		}
	}
	cl := c["list"].([]any)
	if ptr(cl) == ptr(l) || ptr(cl[0]) != ptr(cl) || ptr(cl[1]) == ptr(m) || cl[2] != "s" {
		t.Errorf("the list's copy: %p %p %p", cl, cl[0], cl[1])
	}
	cn := c["named"].(named)
	if ptr(cn) == ptr(n) || ptr(cn["self"]) != ptr(cn) {
		t.Error("the named map's copy does not hold itself")
	}
	ct := c["typed"].(map[string][]any)
	if ptr(ct) == ptr(typed) || ptr(ct["l"][0]) != ptr(ct) {
		t.Error("the typed map's copy does not hold itself")
	}
	// Shared, not cyclic: copied where it is, each time.
	shared := map[string]any{"v": 1}
	d := jsonx.CloneMap(map[string]any{"p": shared, "q": shared})
	if ptr(d["p"]) == ptr(shared) || ptr(d["q"]) == ptr(shared) {
		t.Error("a shared value was not copied")
	}
	if v := jsonx.CloneValue([]any{}); v == nil || len(v.([]any)) != 0 {
		t.Errorf("an empty list: %#v", v)
	}
}
