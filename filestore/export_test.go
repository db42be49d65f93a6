package filestore

import (
	"encoding/json"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/uuid"
)

// RewriteAlways makes every save of a log rewrite its file, until t ends.
func RewriteAlways(t testing.TB) { setRewrite(t, 0, [2]int64{0, 1}) }

// RewriteNever makes no save rewrite a log's file, until t ends.
func RewriteNever(t testing.TB) { setRewrite(t, math.MaxInt64, rewriteRatio) }

func setRewrite(t testing.TB, min int64, ratio [2]int64) {
	oldMin, oldRatio := rewriteMin, rewriteRatio
	rewriteMin, rewriteRatio = min, ratio
	t.Cleanup(func() { rewriteMin, rewriteRatio = oldMin, oldRatio })
}

// FileVersion returns the format version of a log file's content; 0 for
// none.
func FileVersion(b []byte) byte { return fileVersion(b) }

// Version4Log is a log of the files of version 4 in testdata/version4, as
// the manifest written with them describes it.
type Version4Log struct {
	ID      uuid.UUID
	Name    string
	Labels  map[string]string
	Parent  uuid.UUID
	ForkSeq int64 `json:"fork_seq"`
	Head    int64 // its head before the migration
	Frames  int
	Keys    []string // every batch key its frames hold, in the order the batches were stored
	Texts   []string // its messages' content
	Deps    map[string]any
}

// CopyVersion4 copies the directory of log files of version 4 that the
// last version of the package to write that format saved
// (testdata/version4/logs) to a new directory, and returns it with what
// its logs hold.
func CopyVersion4(t testing.TB) (string, []Version4Log) {
	t.Helper()
	src, dir := filepath.Join("testdata", "version4", "logs"), t.TempDir()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dir, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join("testdata", "version4", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var logs []Version4Log
	if err := json.Unmarshal(b, &logs); err != nil {
		t.Fatal(err)
	}
	return dir, logs
}
