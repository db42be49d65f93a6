package nous_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/storetest"
)

// spoiled is a store whose reads return some events broken.
type spoiled struct {
	nous.Store
	bad map[int]json.RawMessage // by index in the events read
}

func (s *spoiled) Read(ctx context.Context, id uuid.UUID, after int64) (nous.Stored, error) {
	st, err := s.Store.Read(ctx, id, after)
	for i, b := range s.bad {
		if i < len(st.Events) {
			st.Events[i] = b
		}
	}
	return st, err
}

// A log read whole, its events decoded in shares on several goroutines,
// loads as it was saved; a broken event anywhere in it fails the load
// with ErrCorrupt naming the first broken one.
func TestLoadManyEvents(t *testing.T) {
	ctx := context.Background()
	mem := storetest.NewMemory()
	c := nous.NewContext()
	for i := range 3000 {
		if err := c.AddMessage(nous.UserMessage(fmt.Sprint("message ", i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Save(ctx, mem); err != nil {
		t.Fatal(err)
	}
	got, err := nous.Load(ctx, mem, c.Log().ID())
	if err != nil {
		t.Fatal(err)
	}
	if got.Len() != 3000 || got.Messages()[2999].Content != "message 2999" {
		t.Fatalf("loaded %d messages", got.Len())
	}
	for _, tc := range []struct {
		bad  map[int]json.RawMessage
		want string
	}{
		{map[int]json.RawMessage{2500: json.RawMessage(`{"seq":`)}, "events[2500]"},
		{map[int]json.RawMessage{2999: json.RawMessage(`{"seq":1,"type":"user_message"}`)}, "events[2999]"},
		{map[int]json.RawMessage{1700: json.RawMessage(`[]`), 100: json.RawMessage(`7`)}, "events[100]"},
	} {
		_, err := nous.Load(ctx, &spoiled{Store: mem, bad: tc.bad}, c.Log().ID())
		if !errors.Is(err, nous.ErrCorrupt) || !strings.Contains(err.Error(), tc.want+":") {
			t.Errorf("%v: want ErrCorrupt naming %s", err, tc.want)
		}
	}
}
