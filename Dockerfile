# gonogo in a container. Two images come out of this file:
#
#   docker build -t gonogo .                     # default: gonogo + Claude Code
#   docker build --target slim -t gonogo:slim .  # gonogo alone (distroless)
#
# The default image carries an agent CLI, because gonogo checks at start that
# its runner's executable is there. AGENT_PACKAGES chooses which npm packages
# go in (any of the three gonogo knows), for example:
#
#   docker build --build-arg AGENT_PACKAGES="@openai/codex@0.169.0" -t gonogo:codex .
#
# then run with -e GONOGO_RUNNER=codex. The slim image has no agent: use it
# with --runner command and an agent of your own, or for dry runs.
#
# Run ("Docker" in docs/slack.md explains each part):
#   docker run --rm -e SLACK_APP_TOKEN -e SLACK_BOT_TOKEN -e ANTHROPIC_API_KEY \
#     -v gonogo-data:/data -v "$PWD/.claude/skills:/skills:ro" gonogo
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/gonogo ./cmd/gonogo \
 && mkdir -p /out/data /out/skills

FROM gcr.io/distroless/static-debian12:nonroot AS slim
COPY --from=build /out/gonogo /usr/local/bin/gonogo
# The data directory belongs to the nonroot user (uid 65532) so the
# volume mounted there is writable.
COPY --from=build --chown=65532:65532 /out/data /data
COPY --from=build /out/skills /skills
ENV GONOGO_DATA_DIR=/data GONOGO_SKILLS_DIR=/skills
VOLUME ["/data"]
USER nonroot:nonroot
ENTRYPOINT ["/usr/local/bin/gonogo"]
CMD ["serve"]

# Node 24, an LTS line the agent CLIs support: Claude Code 2.1.330 declares
# node >=22 (Gemini CLI >=20, Codex >=16), and Node 20 reached its end of
# life in April 2026.
FROM node:24-bookworm-slim
ARG AGENT_PACKAGES="@anthropic-ai/claude-code@2.1.330"
RUN npm install -g --no-fund --no-audit ${AGENT_PACKAGES} \
 && npm cache clean --force \
 && mkdir -p /data /skills && chown node:node /data
COPY --from=build /out/gonogo /usr/local/bin/gonogo
# Claude Code keeps its login and settings under $HOME; mount a volume at
# /home/node to keep a login across containers, or pass ANTHROPIC_API_KEY.
ENV GONOGO_DATA_DIR=/data GONOGO_SKILLS_DIR=/skills \
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1
VOLUME ["/data"]
USER node
WORKDIR /home/node
ENTRYPOINT ["/usr/local/bin/gonogo"]
CMD ["serve"]
