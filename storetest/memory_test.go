package storetest_test

import (
	"testing"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/storetest"
)

func TestMemory(t *testing.T) {
	same := func(_ *testing.T, s nous.Store) nous.Store { return s } // its data lives as long as the value
	storetest.Run(t, func(*testing.T) nous.Store { return storetest.NewMemory() },
		storetest.WithReopen(same), storetest.WithSecondHandle(same))
}
