package jsonx

import (
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
