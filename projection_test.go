package nous_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nous-go/nous"
)

// documents returns every document of testdata: the golden files and the
// inputs of the Deserialize fuzz corpus.
func documents(t *testing.T) map[string][]byte {
	t.Helper()
	docs := map[string][]byte{}
	for _, pattern := range []string{"testdata/*.json", "testdata/v1/*.json", "testdata/nous017/*.json"} {
		paths, err := filepath.Glob(pattern)
		require.NoError(t, err)
		for _, p := range paths {
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			docs[p] = b
		}
	}
	corpus, err := filepath.Glob("testdata/fuzz/FuzzDeserialize/*")
	require.NoError(t, err)
	for _, p := range corpus {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		lit, ok := strings.CutPrefix(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[1]), "[]byte(")
		require.True(t, ok, p)
		s, err := strconv.Unquote(strings.TrimSuffix(lit, ")"))
		require.NoError(t, err, p)
		docs[p] = []byte(s)
	}
	return docs
}

// The messages projection of a version 2 document is a valid version 1
// document's messages: for every document in testdata that reads, the
// projection Serialize writes for it reads back with the version 1 reader
// as the view, less what version 1 cannot hold (times, reasoning text, the
// difference between Content and a leading text part).
func TestProjectionReadsAsVersion1(t *testing.T) {
	read := 0
	for name, data := range documents(t) {
		c, err := nous.DeserializeWithLogger(data, quietLogger())
		if err != nil {
			continue // a corpus entry the reader refuses
		}
		read++
		saved, err := c.Serialize()
		require.NoError(t, err, name)
		var doc map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(saved, &doc), name)
		doc["version"] = json.RawMessage("1")
		delete(doc, "log")
		var v1 bytes.Buffer
		enc := json.NewEncoder(&v1)
		enc.SetEscapeHTML(false) // keep the arguments' bytes as they are
		require.NoError(t, enc.Encode(doc))
		d, err := nous.DeserializeWithLogger(v1.Bytes(), quietLogger())
		require.NoError(t, err, "%s: the projection does not read as version 1:\n%s", name, doc["messages"])

		want := c.Messages()
		for i := range want {
			m := &want[i]
			if len(m.Parts) > 0 && m.Content != "" {
				m.Parts = append([]nous.ContentPart{nous.TextPart(m.Content)}, m.Parts...)
				m.Content = ""
			}
			m.ReasoningContent = ""
			if m.Metadata == nil {
				m.Metadata = map[string]any{}
			}
		}
		got := d.Messages()
		for i := range got {
			got[i].CreatedAt = want[i].CreatedAt
		}
		assert.Equal(t, want, got, name)
	}
	assert.GreaterOrEqual(t, read, 8, "documents read")
}

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
