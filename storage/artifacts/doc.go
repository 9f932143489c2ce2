// Package artifacts owns where step artifacts live when they must not live
// in a workflow's history: a key-value store of immutable bodies, one per
// version of one attempt's artifact, kept in a directory (Dir, for example
// a volume every worker mounts) or in an S3 bucket (S3, any S3-compatible
// service). Open picks one from GONOGO_ARTIFACTS.
//
// # Contract
//
// A key names one body forever. Put of a new key stores it; Put of a key
// already holding the same bytes succeeds and changes nothing (an activity
// retried after its first try stored the body but lost the reply); Put of a
// key holding other bytes fails with an error wrapping ErrExists and leaves
// the stored bytes as they were, even when several processes race to put
// the same key. Get of a key never put fails with an error wrapping
// ErrNotFound. Keys are checked before any I/O (see CheckKey); Key builds
// the keys gonogo uses, after the artifact file names a run writes today.
//
// # Configuration
//
//	GONOGO_ARTIFACTS       dir:PATH, or s3://BUCKET/PREFIX (the prefix may be empty)
//	GONOGO_S3_ENDPOINT     host:port (TLS), http://host:port (no TLS) or https://host:port;
//	                       unset means AWS S3
//	AWS_ACCESS_KEY_ID      with AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for
//	                       temporary ones): the S3 credentials; with neither, the
//	                       instance's or container's IAM role
//	AWS_REGION             the bucket's region; unset asks the service
//
// No secret is ever put in an error or a printed S3Config.
//
// # Caveats
//
// Nothing is ever deleted: removing a run's artifacts is the operator's job
// (a directory to remove, an S3 lifecycle rule). Bodies are read and written
// whole, in memory; artifacts are capped at GONOGO_MAX_ARTIFACT (1 MiB by
// default) before they get here.
//
// Dir publishes a body with a hard link from a synced temporary file, so it
// needs a file system with hard links (local disks and NFS have them; some
// SMB and FUSE mounts do not, and Put says so). A process that dies mid-Put
// can leave a temporary file (named .tmp-*) behind; it is never read. In a
// Dir one key cannot be a folder of another ("a" and "a/b"); Key never makes
// such pairs.
//
// S3 relies on the service honouring a conditional write (If-None-Match: *),
// which AWS S3 and MinIO do; on a service that ignores the header, two
// writers racing within one round trip could both succeed, the last one
// winning (see S3.Put).
package artifacts
