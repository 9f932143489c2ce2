package terminal

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/parse"
)

// ChainInstead is the hint for a chain given without --chain (gonogo run
// 'deliver-prd -> deliver-user-stories', or a lone skill name): when arg
// names no file and reads as a chain that check would accept against the
// installed skills (load) and pol, or as a chain of several skills, it
// suggests --chain; otherwise it is "".
func ChainInstead(arg string, pol engine.Policy, load func() (*parse.Catalog, error)) string {
	if _, err := os.Lstat(arg); !errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	expr, err := parse.Chain(arg)
	if err != nil {
		return ""
	}
	if cat, err := load(); err == nil {
		if _, err := engine.PreflightChain(expr, cat, pol); err == nil {
			return fmt.Sprintf("it reads as a chain of installed skills: did you mean --chain %s?", ShellWord(arg))
		}
	}
	if len(expr.Names) > 1 {
		return fmt.Sprintf("it reads as a chain of skills: did you mean --chain %s?", ShellWord(arg))
	}
	return ""
}
