package jsonx

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestDepth(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{`1`, 0},
		{`"{[{["`, 0},
		{`{}`, 1},
		{`[1,[2,[3]]]`, 3},
		{`{"a":"}}}\"{{{","b":[{}]}`, 3},
		{strings.Repeat("[", 1500) + strings.Repeat("]", 1500), 1500},
	} {
		if got := Depth([]byte(tc.in)); got != tc.want {
			t.Errorf("Depth(%.40s) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestDecodeRefusesTrailingData(t *testing.T) {
	for _, in := range []string{`{"a":1} }`, `{"a":1} ]`, `{"a":1} {}`, `{"a":1} x`} {
		if _, err := DecodeMap([]byte(in)); err == nil {
			t.Errorf("DecodeMap(%s) accepted trailing data", in)
		}
	}
	m, err := DecodeMap([]byte(` {"a":1} `))
	if err != nil || m["a"] != 1 {
		t.Errorf("DecodeMap = %v, %v", m, err)
	}
}

func TestEqual(t *testing.T) {
	big := uint64(1) << 63
	tests := []struct {
		a, b any
		want bool
	}{
		{nil, nil, true},
		{3, 3.0, true},
		{int64(3), json.Number("3"), true},
		{3, 3.5, false},
		{3.5, json.Number("3.5"), true},
		{int64(1<<53 + 1), float64(1 << 53), false},
		{big, json.Number("9223372036854775808"), true},
		{big, float64(big), false},
		{"a", "a", true},
		{"a", "b", false},
		{true, true, true},
		{true, 1, false},
		{map[string]any{"a": 1, "b": []any{1.0, "x"}}, map[string]any{"a": 1.0, "b": []any{1, "x"}}, true},
		{map[string]any{"a": 1}, map[string]any{"a": 1, "b": 2}, false},
		{map[string]any{"a": 1}, map[string]any{"b": 1}, false},
		{[]any{1}, []any{1, 2}, false},
		{[]any{}, map[string]any{}, false},
		{[]string{"a"}, []any{"a"}, false}, // a typed value is equal to nothing
		{nil, map[string]any(nil), false},
	}
	for _, tt := range tests {
		if got := Equal(tt.a, tt.b); got != tt.want {
			t.Errorf("Equal(%#v, %#v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
		if got := Equal(tt.b, tt.a); got != tt.want {
			t.Errorf("Equal(%#v, %#v) = %v, want %v", tt.b, tt.a, got, tt.want)
		}
	}
}
