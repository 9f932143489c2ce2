// Package artifacts owns where step artifacts live when they must not live
// in a workflow's history: a key-value store of immutable bodies, one per
// version of one attempt's artifact, kept in a directory (Dir, for example
// a volume every worker mounts) or in an S3 bucket (S3, any S3-compatible
// service). Open picks one from GONOGO_ARTIFACTS. A key names one body
// forever: Put of the same bytes again succeeds and changes nothing, of
// other bytes fails with ErrExists; Get of a key never put fails with
// ErrNotFound. No secret is ever put in an error or a printed S3Config.
//
// It imports no other gonogo package; minio-go speaks S3. The contract in
// full, the variables it reads and its caveats (nothing is deleted, Dir
// needs hard links, S3 a service that honours If-None-Match):
// docs/temporal.md.
//
//	st, err := artifacts.Open(os.Getenv(artifacts.EnvArtifacts), os.Getenv)
//	if err != nil {
//		return err // names the variable at fault
//	}
//	key := artifacts.Key(runID, 1, 2, 1, "deliver-prd") // <run>/01-deliver-prd.attempt-2.md
//	err = st.Put(ctx, key, body)
package artifacts
