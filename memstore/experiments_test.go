package memstore_test

import (
	"testing"
	"time"

	"github.com/twostep/twostep/experiments/experimentstest"
	"github.com/twostep/twostep/memstore"
)

func TestExperimentStore(t *testing.T) {
	t.Parallel()
	experimentstest.Run(t, memstore.New(), time.Sleep)
}
