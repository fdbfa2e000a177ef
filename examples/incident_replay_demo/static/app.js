"use strict";
// The page only displays what the server answers; every step runs the real library there.

const labels = {
  replay: "Replay incident",
  correct: "Apply correction",
  compare: "Compare executions",
  promote: "Promote to test",
};

// Text from a trace may hold controls, bidi overrides and invisible characters: each is
// shown as its escape (\u202e), marked, never as itself. UNSAFE is the server's copy of
// toolreplay's rule (/static/unsafe.js).
function escapeOne(character) {
  const hex = (unit) => "\\u" + unit.toString(16).padStart(4, "0");
  const point = character.codePointAt(0);
  if (point <= 0xffff) return hex(point);
  const above = point - 0x10000; // beyond the BMP: its UTF-16 pair, as JSON spells it
  return hex(0xd800 + (above >> 10)) + hex(0xdc00 + (above & 0x3ff));
}

function escapeUnsafe(text, keep = "") {
  return String(text).replace(UNSAFE, (found) => (keep.includes(found) ? found : escapeOne(found)));
}

function visible(text) {
  const shown = String(text);
  const nodes = [];
  let position = 0;
  for (const found of shown.matchAll(UNSAFE)) {
    if (found.index > position) nodes.push(document.createTextNode(shown.slice(position, found.index)));
    const mark = document.createElement("span");
    mark.className = "escaped";
    mark.textContent = escapeOne(found[0]);
    nodes.push(mark);
    position = found.index + found[0].length;
  }
  if (position < shown.length) nodes.push(document.createTextNode(shown.slice(position)));
  return nodes;
}

function el(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined) node.append(...visible(text));
  if (className) node.className = className;
  return node;
}

function calls(count) {
  return `${count} provider ${count === 1 ? "call" : "calls"}`;
}

function decision(value) {
  return el("span", value, `decision ${value}`);
}

function fill(name, parts) {
  const target = document.querySelector(`[data-result="${name}"]`);
  target.replaceChildren(...parts);
}

function render(state) {
  const results = state.results || {};
  const incident = results.incident;
  fill("incident", incident ? [
    el("span", `Recorded decision: `), decision(incident.decision),
    el("span", ` for ${incident.amount.toLocaleString("en-US", { style: "currency", currency: "USD" })} ` +
      `(${incident.operations} operations captured, ` +
      (incident.provider_calls === null
        ? "loaded from a trace file)."
        : `${calls(incident.provider_calls)} at capture time).`)),
  ] : [el("span", "No incident is recorded: press Reset demo to record it again.")]);
  const replay = results.replay;
  fill("replay", replay ? [
    el("span", "Replayed decision: "), decision(replay.decision),
    el("span", ` · ${replay.operations_replayed} operations replayed · `),
    el("span", calls(replay.provider_calls), "calls"),
  ] : []);
  const correct = results.correct;
  const supplied = correct && correct.supplied.length ? ` · supplied ${correct.supplied.join(", ")}` : "";
  if (correct && correct.stopped_at) {
    fill("correct", [el("span", `The fork stopped at ${correct.stopped_at}${supplied}.`)]);
  } else {
    fill("correct", correct ? [
      el("span", "Corrected fork decision: "), decision(correct.decision),
      el("span", ` · patched ${correct.patched_effect}${supplied} · `),
      el("span", calls(correct.provider_calls), "calls"),
      el("span", `Not called by the corrected run: ${correct.not_called.join(", ") || "none"}.`, "note"),
    ] : []);
  }
  renderAsking(state.asking);
  const compare = results.compare;
  fill("compare", compare ? [
    el("span", `First observable divergence: ${compare.type} at ${compare.effect} ` +
      `(occurrence ${compare.occurrence}), path ${compare.path}: ` +
      `${JSON.stringify(compare.source)} → ${JSON.stringify(compare.target)}`),
    el("span", "This is where the two executions first differ observably, " +
      "not a claim about the root cause." +
      (compare.from_patch ? " The target's value here came from the correction." : ""), "note"),
    el("span", `Missing from the corrected run: ${compare.missing.join(", ") || "none"}. ` +
      `Added: ${compare.added.map((a) => `${a.effect} (${a.origin})`).join(", ") || "none"}. ` +
      `Asked differently: ${compare.asked_differently.map((a) =>
        `${a.effect} (${a.origin}) at ${a.paths.join(", ")}`).join("; ") || "none"}.`,
    "rows"),
  ] : []);
  const promote = results.promote;
  fill("promote", promote ? [
    el("span", `Promoted case ${promote.case} · verification passed · ` +
      `returned ${JSON.stringify(promote.returned)}`),
    el("span", `${promote.files} files: the case manifest, a copy of the trace named by its ` +
      `SHA-256 (${promote.trace_sha256.slice(0, 12)}…) and the pytest module that replays it.`, "note"),
  ] : []);

  for (const step of state.steps) {
    const card = document.querySelector(`[data-step="${step}"]`);
    const button = document.querySelector(`[data-action="${step}"]`);
    const done = state.completed.includes(step);
    card.classList.toggle("done", done);
    card.classList.toggle("next", state.next === step);
    button.disabled = state.next !== step || (step === "correct" && Boolean(state.asking));
    button.textContent = done ? `${labels[step]} ✓` : labels[step];
  }
}

let askedKey = null;

function renderAsking(asking) {
  const box = document.querySelector("[data-ask]");
  box.hidden = !asking;
  document.querySelector("[data-supply]").disabled = !asking;
  if (!asking) {
    askedKey = null;
    return;
  }
  document.querySelector("[data-asked-call]").replaceChildren(...visible(
    `The corrected run called ${asking.effect} (occurrence ${asking.occurrence}) with ` +
    `${JSON.stringify(asking.inputs)}, a call the recording never made. What did it answer?` +
    (asking.suggestion === null ? "" : " (Prefilled with the recorded answer of the same effect.)")));
  const key = JSON.stringify([asking.effect, asking.occurrence, asking.inputs]);
  if (key !== askedKey) {  // a new question: start from the suggestion, keep edits otherwise
    askedKey = key;
    // JSON with its unsafe characters as \u escapes: the same value, and nothing hidden.
    document.getElementById("supply-value").value =
      escapeUnsafe(JSON.stringify(asking.suggestion, null, 2), "\n");
  }
}

function showError(message) {
  const box = document.getElementById("error");
  box.replaceChildren(...visible(message));
  box.hidden = !message;
}

async function call(method, path, body = {}) {
  const response = await fetch(path, {
    method,
    headers: method === "POST" ? { "Content-Type": "application/json" } : {},
    body: method === "POST" ? JSON.stringify(body) : undefined,
  });
  const document_ = await response.json();
  if (!response.ok) throw new Error(document_.error ? document_.error.message : response.statusText);
  return document_;
}

async function act(action, body = {}) {
  document.querySelectorAll("button").forEach((button) => { button.disabled = true; });
  try {
    showError("");
    render(await call("POST", `/api/actions/${action}`, body));
  } catch (error) {
    showError(error.message);
    // The step may have changed the server's state before failing: show what it is now.
    try {
      render(await call("GET", "/api/state"));
    } catch (stateError) {
      showError(`${error.message} (and the state could not be read: ${stateError.message})`);
    }
  }
  document.querySelector('[data-action="reset"]').disabled = false;
}

document.querySelectorAll("button[data-action]").forEach((button) => {
  button.addEventListener("click", () => act(button.dataset.action));
});

document.querySelector("[data-supply]").addEventListener("click", () => {
  let value;
  try {
    value = JSON.parse(document.getElementById("supply-value").value);
  } catch (error) {
    showError(`The answer is not valid JSON: ${error.message}`);
    return;
  }
  act("supply", { value });
});

call("GET", "/api/state").then(render).catch((error) => showError(error.message));
