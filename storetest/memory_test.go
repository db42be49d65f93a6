package storetest_test

import (
	"testing"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/storetest"
)

func TestMemory(t *testing.T) {
	storetest.Run(t, func(*testing.T) nous.Store { return storetest.NewMemory() })
}
