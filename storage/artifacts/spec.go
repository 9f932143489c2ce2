package artifacts

import "path/filepath"

// Default is where a worker keeps artifacts when GONOGO_ARTIFACTS is not
// set: a folder of its data directory, which serves one machine (or
// workers that share the data directory's volume).
func Default(dataDir string) string {
	return "dir:" + filepath.Join(dataDir, "artifacts")
}

// Spec is the store spec GONOGO_ARTIFACTS (as getenv reads it) names,
// else Default(dataDir).
func Spec(getenv func(string) string, dataDir string) string {
	if spec := getenv(EnvArtifacts); spec != "" {
		return spec
	}
	return Default(dataDir)
}
