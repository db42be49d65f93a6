package filestore

import (
	"math"
	"testing"
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
