#!/usr/bin/env bash
# The AG-UI conformance matrix of the implementations people run: wireprobe's AG-UI server suite
# against third-party AG-UI servers, and its client suite against real clients
# (scripts/agui-clients.sh), published as reports/agui-ecosystem.html and .md (rules down,
# implementations across, each cell linked to the frame that decided it in that
# implementation's own page under reports/agui-ecosystem/). Each server is installed from its
# registry at a pinned version and served on 127.0.0.1 with no model key:
#   pydantic-ai     pydantic-ai-slim[ag-ui]: Agent(TestModel()) + one tool, AGUIAdapter.dispatch_request
#   ag-ui-protocol  the ag-ui-protocol SDK's minimal FastAPI server (RUN_STARTED, one text message, RUN_FINISHED)
#   langgraph       ag-ui-langgraph: a one-node graph on GenericFakeChatModel, add_langgraph_fastapi_endpoint
#   aimock          @copilotkit/aimock's AGUIMock with one text fixture matching any input
#   ag2             AG2's AGUIStream on ag2.testing's scripted model
#   llama_index     llama-index-protocols-ag-ui's workflow router on MockFunctionCallingLLM
#   langroid        ag-ui-langroid on langroid's MockLMConfig
#   adk             ag-ui-adk (Google ADK), its model the LLM mock speaking Gemini
#   agent_framework agent-framework-ag-ui (Microsoft), the LLM mock speaking OpenAI
#   agno            Agno's AgentOS AGUI interface, the LLM mock speaking OpenAI
#   strands         ag-ui-strands (AWS Strands), the LLM mock speaking OpenAI
#   crewai          ag-ui-crewai, the LLM mock speaking OpenAI through litellm
# The last five talk to scripts/agui-servers/llm_mock.mjs (@copilotkit/aimock's LLMock), started
# beside each in the same namespace, through their SDK's base URL and a fake key, as the
# upstream Dojo does. Every wrapper and the mock read wireprobe's `wireprobe:` directives
# (suites/agui/flows.toml), so text, backend and frontend tool calls and failures can be shown;
# notes/issue-62/frameworks.md says what each framework shows and how its wrapper was made.
# The wrappers are ours, in scripts/agui-servers/. Installs go under target/agui-interop/env/
# (a venv per Python server, an npm prefix for aimock, a venv for the ag-ui-validate cross-check)
# and are skipped when already complete. Only the install step uses the network (PyPI, npm).
# The serve step runs in a private network namespace holding only loopback (`unshare -rn`) when
# the machine allows it, so no server can reach anything off-machine; otherwise it says so and
# runs in the ordinary namespace.
#
# For each server: start it on a free port, wait until it listens, capture one raw SSE answer to
# a plain message (NAME.sse, headers in NAME.headers), run
#   $WIREPROBE run agui --target URL --transport sse --report json=target/agui-interop/NAME.json
# run ag-ui-validate on NAME.sse (NAME.validate.txt) and live on URL (NAME.validate-live.txt),
# stop the server, and print one line: name, versions, summary counts, failing rules.
# A server that cannot be installed or started is reported with the reason, and the run goes on.
# Exit status: 0, or 1 when wireprobe itself errored (exit status other than 0/1, or no report):
# the findings about the servers never change it.
#
# An implementation that cannot be installed or started is a column of the matrix saying why.
#
# Usage: scripts/agui-ecosystem.sh [NAME...]        (default: every server, then the clients;
#                                                    naming servers runs those and publishes
#                                                    nothing)
#        scripts/agui-ecosystem.sh --publish        (the matrix again from the last runs' reports)
# Env:   WIREPROBE   the binary (default: the newer of target/release/wireprobe and target/debug/wireprobe)
#        PYTHON      the interpreter for the venvs (default python3; ag-ui-validate needs >= 3.11)
#        AGUI_INTEROP_NETNS=0   do not isolate the serve step in a network namespace
set -euo pipefail
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
cd "$(dirname "$self")/.."
root=$PWD

# ---- pinned versions -----------------------------------------------------------------------
PYDANTIC_AI_PKGS=('pydantic-ai-slim[ag-ui]==2.68.0' 'ag-ui-protocol==1.0.0' 'starlette==1.10.0' 'uvicorn==0.54.0')
AG_UI_PROTOCOL_PKGS=('ag-ui-protocol==1.0.0' 'fastapi==0.165.0' 'uvicorn==0.54.0')
LANGGRAPH_PKGS=('ag-ui-langgraph[fastapi]==0.0.47' 'ag-ui-protocol==1.0.0' 'langgraph==1.2.24'
  'langgraph-checkpoint==4.3.2' 'langchain-core==1.8.3' 'fastapi==0.165.0' 'uvicorn==0.54.0')
AIMOCK_PKG='@copilotkit/aimock@1.43.0'
# The frameworks of notes/issue-62/frameworks.md: each its own venv (their pins conflict).
AG2_PKGS=('ag2[ag-ui]==1.2.1' 'ag-ui-protocol==1.0.0' 'starlette==1.10.0' 'uvicorn==0.55.0')
LLAMA_INDEX_PKGS=('llama-index-protocols-ag-ui==0.6.0' 'llama-index-core==0.14.25'
  'llama-index-workflows==2.26.1' 'ag-ui-protocol==1.0.0' 'fastapi==0.165.0' 'uvicorn==0.55.0')
LANGROID_PKGS=('ag-ui-langroid==0.2.0' 'langroid==0.69.16' 'ag-ui-protocol==1.0.0'
  'fastapi==0.165.0' 'tiktoken==0.14.0' 'uvicorn==0.55.0')
ADK_PKGS=('ag-ui-adk==0.11.0' 'google-adk==2.15.0' 'google-genai==2.34.0' 'ag-ui-protocol==1.0.0'
  'fastapi==0.165.0' 'uvicorn==0.55.0')
AGENT_FRAMEWORK_PKGS=('agent-framework-ag-ui==1.7.0' 'agent-framework-core==1.26.0'
  'agent-framework-openai==1.17.0' 'uvicorn==0.55.0')
AGNO_PKGS=('agno[agui,os]==3.1.10' 'ag-ui-protocol==1.0.0' 'openai==3.63.0' 'fastapi==0.165.0'
  'uvicorn==0.55.0')
STRANDS_PKGS=('ag-ui-strands==1.0.2' 'strands-agents[openai]==1.65.0' 'ag-ui-protocol==1.0.0'
  'fastapi==0.165.0' 'uvicorn==0.55.0')
CREWAI_PKGS=('ag-ui-crewai==1.0.0' 'crewai==1.15.44' 'litellm==1.110.2' 'ag-ui-protocol==1.0.0'
  'uvicorn==0.55.0')
VALIDATE_PKGS=('ag-ui-validate[transport]==0.4.0')

out=target/agui-interop
env_dir=$out/env
servers_dir=scripts/agui-servers
all_servers=(pydantic-ai ag-ui-protocol langgraph aimock ag2 llama_index langroid adk
  agent_framework agno strands crewai)
# Those whose model is the LLM mock (scripts/agui-servers/llm_mock.mjs), started beside them.
mocked_servers=" adk agent_framework agno strands crewai "
python=${PYTHON:-python3}

if [ -n "${WIREPROBE:-}" ]; then
  bin=$WIREPROBE
else
  # The newer of the release and debug builds: a stale one may predate the AG-UI profile.
  bin=$( (ls -t target/release/wireprobe target/debug/wireprobe 2>/dev/null || true) | head -1)
  [ -n "$bin" ] || { echo "agui-ecosystem: build wireprobe first (cargo build --release)" >&2; exit 1; }
fi
case "$bin" in /*) ;; *) bin=$root/$bin ;; esac

mkdir -p "$out" "$env_dir"

# ---- install (network: PyPI and npm only) ---------------------------------------------------
# A stamp naming the pinned set marks a complete install; a half-done one is redone.
stamp_of() { printf '%s\n' "$@" | sha1sum | cut -c1-12; }

install_venv() { # NAME PKG...   -> 0, or 1 with the reason in $out/NAME.install.log
  local name=$1; shift
  local dir=$env_dir/$name stamp
  stamp=$dir/.installed-$(stamp_of "$@")
  [ -f "$stamp" ] && return 0
  {
    echo "# $(date -u +%FT%TZ) installing into $dir: $*"
    [ -x "$dir/bin/python" ] || "$python" -m venv "$dir"
    "$dir/bin/python" -m pip install --disable-pip-version-check -q "$@"
  } >"$out/$name.install.log" 2>&1 || return 1
  touch "$stamp"
}

install_npm() { # NAME PKG
  local name=$1 pkg=$2
  local dir=$env_dir/$name stamp
  stamp=$dir/.installed-$(stamp_of "$pkg")
  [ -f "$stamp" ] && return 0
  {
    echo "# $(date -u +%FT%TZ) installing into $dir: $pkg"
    mkdir -p "$dir"
    npm install --prefix "$dir" --save-exact --no-audit --no-fund "$pkg"
  } >"$out/$name.install.log" 2>&1 || return 1
  touch "$stamp"
}

install_server() {
  case $1 in
    pydantic-ai)    install_venv pydantic-ai "${PYDANTIC_AI_PKGS[@]}" ;;
    ag-ui-protocol) install_venv ag-ui-protocol "${AG_UI_PROTOCOL_PKGS[@]}" ;;
    langgraph)      install_venv langgraph "${LANGGRAPH_PKGS[@]}" ;;
    ag2)            install_venv ag2 "${AG2_PKGS[@]}" ;;
    llama_index)    install_venv llama_index "${LLAMA_INDEX_PKGS[@]}" ;;
    langroid)       install_venv langroid "${LANGROID_PKGS[@]}" ;;
    adk)            install_venv adk "${ADK_PKGS[@]}" && install_server aimock ;;
    agent_framework) install_venv agent_framework "${AGENT_FRAMEWORK_PKGS[@]}" && install_server aimock ;;
    agno)           install_venv agno "${AGNO_PKGS[@]}" && install_server aimock ;;
    strands)        install_venv strands "${STRANDS_PKGS[@]}" && install_server aimock ;;
    crewai)         install_venv crewai "${CREWAI_PKGS[@]}" && install_server aimock ;;
    aimock)         command -v npm >/dev/null && command -v node >/dev/null || {
                      echo "node/npm not found" >"$out/aimock.install.log"; return 1; }
                    install_npm aimock "$AIMOCK_PKG" ;;
    *) echo "unknown server $1 (known: ${all_servers[*]})" >&2; return 2 ;;
  esac
}

versions_of() { # NAME -> "pkg ver, ..." as installed
  local dir=$env_dir/$1
  case $1 in
    aimock) node -p 'const p=require(require("path").resolve(process.argv[1]));p.name+" "+p.version' \
              "$dir/node_modules/@copilotkit/aimock/package.json" 2>/dev/null ;;
    *) "$dir/bin/python" -m pip list --disable-pip-version-check --format=freeze 2>/dev/null | tr '_' '-' |
         grep -iE '^(pydantic-ai-slim|ag-ui-protocol|ag-ui-langgraph|langgraph|langchain-core|starlette|fastapi|uvicorn|ag-ui-validate|ag2|llama-index-protocols-ag-ui|llama-index-core|ag-ui-langroid|langroid|ag-ui-adk|google-adk|agent-framework-ag-ui|agent-framework-core|agno|ag-ui-strands|strands-agents|ag-ui-crewai|crewai)==' |
         tr '\n' ' ' | sed 's/ $//; s/ /, /g' ;;
  esac
}

# ---- serve and probe (no network needed) -----------------------------------------------------
free_port() {
  "$python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

server_pid=
mock_pid=
stop_server() {
  local pid
  for pid in "$server_pid" "$mock_pid"; do
    if [ -n "$pid" ]; then
      kill "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
    fi
  done
  server_pid=
  mock_pid=
}

start_mock() { # NAME -> exports the LLM mock's URL for the server; 1 when it does not come up
  local port log=$out/$1.mock.log
  port=$(free_port)
  AIMOCK_PREFIX=$env_dir/aimock node "$servers_dir/llm_mock.mjs" "$port" >"$log" 2>&1 &
  mock_pid=$!
  local i
  for i in $(seq 1 80); do  # up to 20 s
    if grep -q 'llm mock ready' "$log" 2>/dev/null; then
      export OPENAI_BASE_URL=http://127.0.0.1:$port/v1 OPENAI_API_BASE=http://127.0.0.1:$port/v1
      export OPENAI_API_KEY=sk-mock GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:$port GOOGLE_API_KEY=mock
      return 0
    fi
    kill -0 "$mock_pid" 2>/dev/null || return 1
    sleep 0.25
  done
  return 1
}

start_server() { # NAME PORT -> sets server_pid and url; 1 when it does not come up
  local name=$1 port=$2 path=/agui
  local log=$out/$name.server.log
  if [[ $mocked_servers == *" $name "* ]] && ! start_mock "$name"; then
    echo "the LLM mock did not start: $(tail -n 2 "$out/$name.mock.log" | tr '\n' ' ')" >"$log"
    stop_server
    return 1
  fi
  case $name in
    pydantic-ai)    "$env_dir/$name/bin/python" "$servers_dir/pydantic_ai_server.py" "$port" >"$log" 2>&1 & ;;
    ag-ui-protocol) "$env_dir/$name/bin/python" "$servers_dir/ag_ui_protocol_server.py" "$port" >"$log" 2>&1 & ;;
    langgraph)      "$env_dir/$name/bin/python" "$servers_dir/langgraph_server.py" "$port" >"$log" 2>&1 & ;;
    aimock)         AIMOCK_PREFIX=$env_dir/aimock node "$servers_dir/aimock_server.mjs" "$port" >"$log" 2>&1 &
                    path=/ ;;
    llama_index)    "$env_dir/$name/bin/python" "$servers_dir/${name}_server.py" "$port" >"$log" 2>&1 &
                    path=/agui/run ;;
    *)              "$env_dir/$name/bin/python" "$servers_dir/${name}_server.py" "$port" >"$log" 2>&1 & ;;
  esac
  server_pid=$!
  url=http://127.0.0.1:$port$path
  local i
  for i in $(seq 1 240); do  # up to 60 s
    if ! kill -0 "$server_pid" 2>/dev/null; then
      wait "$server_pid" 2>/dev/null || true
      server_pid=
      return 1
    fi
    if (: <"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
    sleep 0.25
  done
  stop_server
  return 1
}

# What a server's run needs besides the defaults. ag-ui-langroid calls the model synchronously
# inside its async handler, so one slow request (the 512 KiB message) stalls every other for
# seconds: its cases get the time that takes (notes/issue-62/frameworks.md).
run_options() {
  case $1 in
    langroid) echo "--timeout-ms 30000" ;;
  esac
}

# One plain user message, the way a UI sends its first turn.
plain_input='{"threadId":"interop-thread","runId":"interop-run-1","state":{},"messages":[{"id":"interop-msg-1","role":"user","content":"Hello."}],"tools":[],"context":[],"forwardedProps":{}}'

capture_sse() { # NAME URL
  curl -sS -N -X POST --max-time 30 -H 'Content-Type: application/json' -H 'Accept: text/event-stream' \
    -D "$out/$1.headers" -o "$out/$1.sse" --data-binary "$plain_input" "$2" 2>"$out/$1.curl.log" || true
}

describe_capture() { # NAME -> "SSE capture: Content-Type ...; line ends ..."
  local ct ends
  ct=$(tr -d '\r' <"$out/$1.headers" 2>/dev/null | sed -n 's/^[Cc]ontent-[Tt]ype: *//p' | tail -n 1)
  if [ ! -s "$out/$1.sse" ]; then ends="empty body"
  elif grep -q $'\r' "$out/$1.sse"; then ends="CR present"
  else ends="LF only"; fi
  echo "content-type '${ct:-none}', $ends"
}

validate_capture() { # NAME URL -> one-phrase summary of ag-ui-validate's findings
  local v=$env_dir/ag-ui-validate/bin/ag-ui-validate rc=0
  [ -x "$v" ] || { echo "ag-ui-validate not installed"; return; }
  "$v" --no-color --json-file "$out/$1.validate.json" "$out/$1.sse" >"$out/$1.validate.txt" 2>&1 || rc=$?
  "$v" --no-color --timeout 30 "$2" >"$out/$1.validate-live.txt" 2>&1 || true
  "$python" - "$out/$1.validate.json" "$rc" <<'EOF' 2>/dev/null || echo "ag-ui-validate exit $rc (see $1.validate.txt)"
import json, sys
r = json.load(open(sys.argv[1]))
fs = r.get("findings") or r.get("diagnostics") or []
by = {}
for f in fs:
    sev = f.get("severity", "?")
    by.setdefault(sev, set()).add(f.get("ruleId") or f.get("rule") or f.get("id") or "?")
parts = [f"{sev}: {','.join(sorted(ids))}" for sev, ids in sorted(by.items())]
print(f"ag-ui-validate exit {sys.argv[2]}" + (" — " + "; ".join(parts) if parts else ", no findings"))
EOF
}

summarise_report() { # NAME.json -> "N cases: p pass, ... | failing rules: ... | warn rules: ..."
  "$python" - "$1" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
s = r["summary"]
counts = ", ".join(f"{s.get(k, 0)} {k}" for k in ("pass", "fail", "warn", "skip", "error"))
def ids(*verdicts):
    return " ".join(x["id"] for x in r["rules"] if x.get("verdict") in verdicts) or "none"
print(f"{s['total']} cases: {counts} | failing rules: {ids('fail', 'error')} | warn rules: {ids('warn')}")
EOF
}

probe_all() { # NAME... ; prints one line per server; returns 1 when wireprobe errored
  local status=0 name port rc why
  trap stop_server EXIT
  for name in "$@"; do
    if [ -f "$out/$name.unavailable" ]; then
      printf '%-15s NOT RUN: %s\n' "$name" "$(cat "$out/$name.unavailable")"
      continue
    fi
    rm -f "$out/$name.absent"
    rm -f "$out/$name.json"
    port=$(free_port)
    if ! start_server "$name" "$port"; then
      why=$(tail -n 3 "$out/$name.server.log" 2>/dev/null | tr '\n' ' ')
      printf '%-15s NOT RUN: server did not listen on 127.0.0.1:%s within 60 s: %s\n' "$name" "$port" "${why:-no output}"
      echo "did not start: ${why:-no output}" | cut -c1-200 >"$out/$name.absent"
      continue
    fi
    capture_sse "$name" "$url"
    rc=0
    "$bin" run agui --target "$url" --transport sse --transcripts failing $(run_options "$name") \
      --report "json=$out/$name.json" \
      >"$out/$name.wireprobe.txt" 2>&1 || rc=$?
    local vsum cap
    vsum=$(validate_capture "$name" "$url")
    cap=$(describe_capture "$name")
    stop_server
    if { [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; } || [ ! -s "$out/$name.json" ]; then
      printf '%-15s WIREPROBE ERROR: exit %s, see %s\n' "$name" "$rc" "$out/$name.wireprobe.txt"
      status=1
      continue
    fi
    printf '%-15s [%s] %s\n' "$name" "$(versions_of "$name")" "$(summarise_report "$out/$name.json")"
    printf '%-15s   capture %s: %s; %s\n' '' "$out/$name.sse" "$cap" "$vsum"
  done
  trap - EXIT
  return $status
}

# ---- the clients ------------------------------------------------------------------------------
client_names=(http-agent ag-ui-client-rs)
client_version() {
  case $1 in
    http-agent) echo "@ag-ui/client $(node -p 'require("./tests/node/node_modules/@ag-ui/client/package.json").version' 2>/dev/null)" ;;
    ag-ui-client-rs) echo "ag-ui-client $(awk '/^name = "ag-ui-client"$/ { getline; gsub(/version = |"/, ""); print }' \
                       scripts/clients/ag-ui-client-rs/Cargo.lock)" ;;
  esac
}

# ---- publish ----------------------------------------------------------------------------------
headline_version() { # NAME -> "package==version" of the package that is the implementation
  local key
  case $1 in
    pydantic-ai) key=pydantic-ai-slim ;;
    langgraph) key=ag-ui-langgraph ;;
    ag2) key=ag2 ;;
    llama_index) key=llama-index-protocols-ag-ui ;;
    langroid) key=ag-ui-langroid ;;
    adk) key=ag-ui-adk ;;
    agent_framework) key=agent-framework-ag-ui ;;
    agno) key=agno ;;
    strands) key=ag-ui-strands ;;
    crewai) key=ag-ui-crewai ;;
    aimock) versions_of aimock; return ;;
    *) key=$1 ;;
  esac
  versions_of "$1" | tr ',' '\n' | sed 's/^ *//' | grep -i "^$key==" || versions_of "$1" | cut -d, -f1
}
# reports/agui-ecosystem/NAME.html is each implementation's own report (failing transcripts
# kept); its JSON beside it is what the matrix reads, and is not committed.
# Publishes what the last runs left under target/: each implementation's page, the matrix, its
# picture. Run alone with --publish.
publish_all() {
  pub=reports/agui-ecosystem
  mkdir -p "$pub"
  rm -f "$pub"/*.json "$pub"/*.html
  matrix_args=()
  publish_one() { # NAME JSON LABEL
    cp "$2" "$pub/$1.json"
    "$bin" report "$pub/$1.json" --format html -o "$pub/$1.html"
    matrix_args+=("$pub/$1.json" --label "$1=$3")
  }
  for name in "${all_servers[@]}"; do
    if [ -s "$out/$name.json" ] && [ ! -f "$out/$name.unavailable" ] && [ ! -f "$out/$name.absent" ]; then
      publish_one "$name" "$out/$name.json" "$name ($(headline_version "$name"))"
    else
      why=$(cat "$out/$name.unavailable" "$out/$name.absent" 2>/dev/null | head -n 1)
      matrix_args+=(--absent "$name=${why:-no report}")
    fi
  done
  for name in "${client_names[@]}"; do
    if [ -s "target/agui-clients/$name.json" ]; then
      publish_one "$name" "target/agui-clients/$name.json" "$name client ($(client_version "$name"))"
    else
      matrix_args+=(--absent "$name client=no report (see target/agui-clients/$name.txt)")
    fi
  done
  "$bin" report matrix "${matrix_args[@]}" --format html -o reports/agui-ecosystem.html
  "$bin" report matrix "${matrix_args[@]}" --format markdown -o reports/agui-ecosystem.md
  # The README's picture of it: the rules some implementation fails, as a browser shows them.
  shot=reports/samples/matrix-agui-ecosystem.png
  browser=$(command -v chromium || command -v chromium-browser || true)
  if [ -n "$browser" ]; then
    "$browser" --headless=new --no-sandbox --disable-gpu --hide-scrollbars --window-size=2600,1500 \
      --virtual-time-budget=2000 --screenshot="$shot" "file://$root/reports/agui-ecosystem.html#verdict=fail" \
      >/dev/null 2>&1 || echo "note: the screenshot failed ($browser)"
  else
    echo "note: no chromium (scripts/install-chromium.sh): $shot not redrawn"
  fi
  echo "published: reports/agui-ecosystem.html, reports/agui-ecosystem.md, $pub/, $shot"
}

# ---- main -------------------------------------------------------------------------------------
if [ "${1:-}" = --probe ]; then  # the serve step, re-entered inside the network namespace
  shift
  ip link set lo up 2>/dev/null || true
  probe_all "$@"
  exit $?
fi
if [ "${1:-}" = --publish ]; then  # the matrix again, from the reports the last runs left
  publish_all
  exit $?
fi

servers=("$@")
[ ${#servers[@]} -gt 0 ] || servers=("${all_servers[@]}")
[ -x "$bin" ] || { echo "agui-ecosystem: no wireprobe binary at $bin (set WIREPROBE)" >&2; exit 1; }
"$bin" list agui >/dev/null || { echo "agui-ecosystem: $bin cannot list the agui suite" >&2; exit 1; }

echo "wireprobe: $bin ($("$bin" --version))"
for name in "${servers[@]}"; do
  rm -f "$out/$name.unavailable"
  rc=0
  install_server "$name" || rc=$?
  [ "$rc" -eq 2 ] && exit 1
  if [ "$rc" -ne 0 ]; then
    echo "install failed: $(tail -n 2 "$out/$name.install.log" | tr '\n' ' ')(log: $out/$name.install.log)" \
      >"$out/$name.unavailable"
  fi
done
install_venv ag-ui-validate "${VALIDATE_PKGS[@]}" ||
  echo "note: ag-ui-validate could not be installed (see $out/ag-ui-validate.install.log); no cross-check"

status=0
if [ "${AGUI_INTEROP_NETNS:-1}" != 0 ] && unshare -rn true 2>/dev/null && command -v ip >/dev/null; then
  echo "serving in a private network namespace (loopback only): no server can reach off-machine"
  unshare -rn env WIREPROBE="$bin" PYTHON="$python" "$self" --probe "${servers[@]}" || status=$?
else
  echo "note: serving without network isolation (unshare -rn unavailable or AGUI_INTEROP_NETNS=0)"
  probe_all "${servers[@]}" || status=$?
fi
# Naming servers is a partial run: the published matrix is only ever made whole.
[ $# -eq 0 ] || exit $status
WIREPROBE=$bin scripts/agui-clients.sh || status=1
publish_all || status=1
exit $status
