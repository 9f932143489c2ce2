// Package storetest owns the cases that hold a store to the contract
// engine.Store declares: one suite, run against every store gonogo has, so
// the engine relies on the contract and not on the habits of the store its
// tests happen to use. It imports engine and the standard library only.
//
// Two stores run it: storage's bbolt store on disk in t.TempDir(), files
// and reopening included (storage/store_contract_test.go), and the
// in-memory store the engine's own tests run the service on, without a data
// directory (engine/store_contract_test.go). Passing it is what lets those
// fast, deterministic tests (no files, no fsync, usable inside a synctest
// bubble) stand for runs on bbolt. A new backend passes Run before the
// engine is pointed at it:
//
//	func TestStoreContract(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) func() storetest.Opened {
//			dir := t.TempDir()
//			return func() storetest.Opened {
//				db := openStore(t, dir)
//				return storetest.Opened{Store: db, Close: db.Close,
//					Journal: db.Journal, Versions: db.ArtifactVersions, Dir: dir}
//			}
//		})
//	}
package storetest
