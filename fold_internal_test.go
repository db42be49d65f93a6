package nous

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/nous-go/nous/internal/reftest"
)

// The batch fold (Load, Deserialize) and the step every append goes
// through (AddMessage, replacements, patched results, Refresh) are one
// definition: over random logs, valid and not, folding the whole log and
// adding its events one by one give the same view, and fail on the same
// event, whatever position the step is told to look at first. Anchors are drawn from every seq, dead entries, bookkeeping
// events and seqs not yet appended included, so that every refusal of
// either form is reached.
func TestFoldStepIsTheBatchFold(t *testing.T) {
	seed := reftest.Seed(t)
	r := rand.New(rand.NewPCG(seed, 7))
	runs, length := 2000, 40
	if testing.Short() {
		runs = 300
	}
	refused, replaced, inserted := 0, 0, 0
	for run := range runs {
		var batch eventLog
		var step eventLog
		var entries []int64
		stepErr := -1
		for i := range length {
			seq := int64(i + 1)
			rec := randomRecord(r, seq, func() int64 {
				if len(entries) == 0 || r.IntN(20) == 0 {
					return r.Int64N(seq + 1) // 0..seq: seq is not in the log yet
				}
				return step.msg(entries[r.IntN(len(entries))]).seq
			})
			switch {
			case rec.typ == EventReplace:
				replaced++
			case rec.after != 0:
				inserted++
			}
			m := &Message{Role: RoleUser, Content: "m"}
			if !rec.typ.IsSurface() {
				m = nil
			}
			b := rec
			batch.pushEvent(&b, m, nil)
			if stepErr >= 0 {
				continue
			}
			s := rec
			// A guess of where the event goes, right or wrong, spares a
			// search at most: it never changes where the event goes.
			near := slot{at: r.IntN(len(entries) + 2), n: r.IntN(3)}
			slot, mi, err := step.add(entries, &s, m, nil, near)
			if err != nil {
				if step.len() != seq-1 {
					t.Fatalf("run %d: a refused event was appended", run)
				}
				stepErr = i
				continue
			}
			if slot.ok {
				entries = slot.fill(entries, mi)
			}
		}
		view, err := batch.fold()
		switch {
		case err != nil && stepErr < 0:
			t.Fatalf("run %d: the batch fold refuses the log (%v), the step takes every event", run, err)
		case err == nil && stepErr >= 0:
			t.Fatalf("run %d: the step refuses event %d, the batch fold takes the log", run, stepErr)
		case err != nil:
			refused++
			if want := "events[" + strconv.Itoa(stepErr) + "]"; !strings.HasPrefix(err.Error(), want) {
				t.Fatalf("run %d: the batch fold fails with %q, the step at event %d", run, err, stepErr)
			}
		case !slices.Equal(view, entries):
			t.Fatalf("run %d: the batch fold gives %v, the steps %v", run, view, entries)
		}
	}
	if refused == 0 || refused == runs || replaced == 0 || inserted == 0 {
		t.Fatalf("the logs drawn do not cover the cases: %d of %d refused, %d replacements, %d insertions", refused, runs, replaced, inserted)
	}
}

// randomRecord returns a record of the event with the given seq: a message
// appended or inserted after an entry, a replacement, or a bookkeeping
// event, with anchors drawn by anchor: mostly seqs in the view, some any
// seq (a bookkeeping event's, a replaced message's, 0, seq itself).
func randomRecord(r *rand.Rand, seq int64, anchor func() int64) record {
	switch k := r.IntN(10); {
	case k < 4:
		return record{typ: EventUserMessage}
	case k < 6:
		return record{typ: EventUserMessage, after: max(anchor(), 1)}
	case k < 9:
		f, z := anchor(), anchor()
		if r.IntN(2) == 0 {
			z = f
		}
		return record{typ: EventReplace, first: f, last: z}
	}
	return record{typ: EventStepStart}
}
