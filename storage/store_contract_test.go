package storage

import (
	"testing"

	"github.com/gonogo/gonogo/engine/storetest"
)

// The bbolt store keeps the Store contract, on disk, files and reopening
// included.
func TestStoreContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) func() storetest.Opened {
		dir := t.TempDir()
		return func() storetest.Opened {
			db := openStore(t, dir, Options{NoSync: true})
			return storetest.Opened{Store: db, Close: db.Close, Journal: db.Journal, Versions: db.ArtifactVersions, Dir: dir}
		}
	})
}
