package nous_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/nous-go/nous"
)

// serSeeds returns the blobs every Deserialize fuzz run starts from: the
// golden files, the version 1 fixtures and the catalog of bad input.
func serSeeds(f *testing.F) [][]byte {
	var seeds [][]byte
	for _, pattern := range []string{"testdata/*.golden.json", "testdata/v1/*.json", "testdata/nous017/*.json"} {
		files, err := filepath.Glob(pattern)
		if err != nil {
			f.Fatal(err)
		}
		for _, name := range files {
			b, err := os.ReadFile(name)
			if err != nil {
				f.Fatal(err)
			}
			seeds = append(seeds, b)
		}
	}
	for _, tt := range serBadCatalog() {
		if len(tt.blob) < 4096 { // the deeply nested ones are huge
			seeds = append(seeds, []byte(tt.blob))
		}
	}
	return seeds
}

// FuzzDeserialize: Deserialize never panics; what it refuses gives no
// context; what it accepts serializes, reads back to the same view and log
// (up to the number rule: 1.0 reads back as 1), and from then on re-encodes
// byte for byte.
func FuzzDeserialize(f *testing.F) {
	for _, s := range serSeeds(f) {
		f.Add(s)
	}
	quiet := slog.New(slog.DiscardHandler)
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := nous.Deserialize(data)
		if err != nil {
			if c != nil {
				t.Fatalf("error %v with a context", err)
			}
			return
		}
		nous.CheckRestoredForTest(t, c)
		c.Logger = quiet
		b1, err := c.Serialize()
		if err != nil {
			t.Fatalf("Serialize of an accepted blob: %v", err)
		}
		c2, err := nous.Deserialize(b1)
		if err != nil {
			t.Fatalf("Deserialize of its own output: %v\n%s", err, b1)
		}
		if a, b := serJSON(t, c.Messages()), serJSON(t, c2.Messages()); !bytes.Equal(a, b) {
			t.Fatalf("view changed by a round trip:\n%s\n%s", a, b)
		}
		if a, b := serJSON(t, c.Log().Events()), serJSON(t, c2.Log().Events()); !bytes.Equal(a, b) {
			t.Fatalf("log changed by a round trip:\n%s\n%s", a, b)
		}
		if c.Log().ID() != c2.Log().ID() {
			t.Fatalf("log ID changed by a round trip")
		}
		c2.Logger = quiet
		b2, err := c2.Serialize()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b1, b2) {
			t.Fatalf("re-encode is not stable:\n%s\n%s", b1, b2)
		}
	})
}

func serJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// FuzzMessageJSON: decoding a message never panics; a valid one encodes,
// decodes to a valid message, and from then on re-encodes byte for byte.
func FuzzMessageJSON(f *testing.F) {
	for _, s := range []string{
		`{"role":"user","content":"hi"}`,
		`{"role":"assistant","tool_calls":[{"id":"c1","name":"f","arguments":{"a": [1, 2.5, "x"]},"metadata":{"thought_signature":"AA=="}}]}`,
		`{"role":"tool","content":"r","tool_call_id":"c1","name":"f","created_at":"2026-01-01T00:00:00.5+02:00"}`,
		`{"role":"user","parts":[{"type":"image","content":"AA==","options":{"media_type":"image/png","n":1.0}},{"type":"thinking","content":"t","options":{"signature":"s"}}]}`,
		`{"role":"system","content":"s","metadata":{"big":123456789012345678901234567890,"f":1e300,"nested":{"l":[null,true]}}}`,
		`{"role":"assistant","reasoning_content":"r","content":"<b>&</b>"}`,
		`{"role":"user","content":"x","metadata":null,"parts":null,"tool_calls":null}`,
		`{"role":"tool"}`,
		`{"role":1}`,
		`[]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var m nous.Message
		if json.Unmarshal(data, &m) != nil || m.Validate() != nil {
			return
		}
		b1, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("Marshal of a valid decoded message: %v", err)
		}
		var m2 nous.Message
		if err := json.Unmarshal(b1, &m2); err != nil {
			t.Fatalf("Unmarshal of its own encoding: %v\n%s", err, b1)
		}
		if err := m2.Validate(); err != nil {
			t.Fatalf("valid message invalid after a round trip: %v\n%s", err, b1)
		}
		b2, err := json.Marshal(m2)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b1, b2) {
			t.Fatalf("re-encode is not stable:\n%s\n%s", b1, b2)
		}
	})
}
