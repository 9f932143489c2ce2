package completion

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
)

// bashOpenQuote is added to cobra's bash script (gonogo completion bash).
// Cobra's script evals the command line to ask gonogo for completions, and
// a word the user is still typing inside quotes (a chain:
// gonogo run --chain 'deliver-prd -> del<TAB>) has an open quote that
// breaks the eval, so nothing is offered. Such a word is handed to gonogo
// without its quote instead, and what gonogo offers is put back as it
// reads inside the quote, without the backslashes cobra would add. Any
// other word goes through cobra's own function. %[1]s is the program name.
const bashOpenQuote = `
# gonogo: complete a word typed after an opening quote (a chain).
__%[1]s_start_quoted()
{
    local cur prev words cword split
    COMPREPLY=()
    if declare -F _init_completion >/dev/null 2>&1; then
        _init_completion -n =: || return
    else
        __%[1]s_init_completion -n =: || return
    fi
    local q=${cur:0:1}
    if [[ $q != "'" && $q != '"' ]] || [[ ${cur:1} == *"$q"* ]]; then
        __start_%[1]s
        return
    fi
    local typed=${cur:1} out directive comp
    words=("${words[@]:0:cword}")
    [[ -n $typed ]] && words+=("$(printf %%q "$typed")")
    cur=$typed
    __%[1]s_get_completion_results
    (( (directive & 1) != 0 )) && return
    if [[ $(type -t compopt) == builtin ]]; then
        (( (directive & 2) != 0 )) && compopt -o nospace
        (( (directive & 4) != 0 )) && compopt +o default
    fi
    while IFS='' read -r comp; do
        comp=${comp%%%%$'\t'*}
        [[ -n $comp && $comp != _activeHelp_* && $comp != *"$q"* && $comp == "$typed"* ]] && COMPREPLY+=("$comp")
    done <<<"$out"
}

if [[ $(type -t compopt) = "builtin" ]]; then
    complete -o default -F __%[1]s_start_quoted %[1]s
else
    complete -o default -o nospace -F __%[1]s_start_quoted %[1]s
fi
`

// OpenQuotes makes the completion bash command of root print cobra's script
// followed by bashOpenQuote.
func OpenQuotes(root *cobra.Command) {
	bash, _, err := root.Find([]string{"completion", "bash"})
	if err != nil || bash.Name() != "bash" || bash.RunE == nil {
		return
	}
	cobraScript := bash.RunE
	bash.RunE = func(c *cobra.Command, args []string) error {
		if err := cobraScript(c, args); err != nil {
			return err
		}
		_, err := fmt.Fprintf(c.OutOrStdout(), bashOpenQuote, root.Name())
		return err
	}
}

// Command adds cobra's completion command to root, as gonogo completion
// bash|zsh|fish|powershell: a shell it has no script for is a mistake
// (cobra's own would print its help, exit 0), and bash's script completes
// a word typed inside an open quote (OpenQuotes).
func Command(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	OpenQuotes(root)
	c, _, err := root.Find([]string{"completion"})
	if err != nil || c == root {
		return
	}
	c.Use, c.DisableFlagsInUseLine = "completion bash|zsh|fish|powershell", true
	c.Args = cobra.ArbitraryArgs
	c.RunE = func(_ *cobra.Command, args []string) error {
		if len(args) == 0 {
			return errors.New("completion needs a shell: bash, zsh, fish or powershell")
		}
		return fmt.Errorf("no completion script for %q: bash, zsh, fish or powershell", args[0])
	}
}
