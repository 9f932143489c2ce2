#!/bin/sh
# A stand-in agent for trying gonogo without one (GONOGO_RUNNER=command,
# GONOGO_RUNNER_CMD=this file): it reads the prompt and answers each step
# with its skill's sample artifact, references/EXAMPLE.md, as gonogo demo
# does. The built-in example's skills (cmd/gonogo/example/skills) have one.
cat >/dev/null
if [ -z "${GONOGO_SKILL_DIR:-}" ] || [ ! -f "$GONOGO_SKILL_DIR/references/EXAMPLE.md" ]; then
  echo "stand-in agent: no sample artifact for skill ${GONOGO_SKILL:-?} (GONOGO_SKILL_DIR=${GONOGO_SKILL_DIR:-unset})" >&2
  exit 1
fi
exec cat "$GONOGO_SKILL_DIR/references/EXAMPLE.md"
