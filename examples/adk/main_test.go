package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// The third turn, after the restart, sees the first two.
func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), t.TempDir(), &out); err != nil {
		t.Fatalf("%v; the output was:\n%s", err, out.String())
	}
	for _, want := range []string{"It is 18°C, sunny.", "It is 24°C, clear.", "== process 2", "You asked about Paris and Rome (9 messages of history)."} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the output does not say %q:\n%s", want, out.String())
		}
	}
}
