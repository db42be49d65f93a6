package nous

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// The decode-side mirrors must read exactly the JSON names their types
// write, or a field would silently not come back.
func TestJSONMirrorsMatch(t *testing.T) {
	for _, pair := range []struct{ typ, mirror reflect.Type }{
		{reflect.TypeFor[Message](), reflect.TypeFor[messageJSON]()},
		{reflect.TypeFor[ContentPart](), reflect.TypeFor[partJSON]()},
		{reflect.TypeFor[ToolCall](), reflect.TypeFor[toolCallJSON]()},
	} {
		want, got := jsonNames(pair.typ), jsonNames(pair.mirror)
		// The one name a mirror reads that its type never writes: the
		// reference library's unparsed arguments.
		got = slices.DeleteFunc(got, func(n string) bool { return n == "_invalid_arguments" })
		if !reflect.DeepEqual(want, got) {
			t.Errorf("%v reads %v, %v writes %v", pair.mirror, got, pair.typ, want)
		}
	}
}

func jsonNames(t reflect.Type) []string {
	var names []string
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		names = append(names, name)
	}
	return names
}
