"""What a cached label is keyed on (docs/labels.md, "The label cache"): a labeler's name plus a hash of everything
that determines its labels. Each backend: every input changed in turn relabels, a change of nothing that determines
a label serves; the default local labelers keep their keys. Then the replies of a server that give no full
distribution over the grades, and the config names that become paths."""
import copy
import gzip
import itertools
import logging
import re
from pathlib import Path

import numpy as np
import pytest
import yaml

from irrepro import labels as L
from irrepro.errors import InputError
from irrepro.labels.shards import cache_keys

from test_labels import FakeServer, _chat_response, make_pairs

N = 6  # pairs per check: fewer than the degeneracy check's 8
_caches = itertools.count()


def _relabels(first, second, tmp_path, prompt="binary", n=N) -> bool:
    """Label ``n`` pairs with ``first`` into a fresh cache, then ask ``second`` for them: True when all are labelled
    again, False when all are served from the cache (anything else fails)."""
    cache = tmp_path / f"cache-{next(_caches)}.sqlite"
    L.label_pairs(first, prompt, make_pairs(n), cache, progress=False)
    stats = {}
    L.label_pairs(second, prompt, make_pairs(n), cache, progress=False, stats=stats)
    assert (stats["cached"], stats["labelled"]) in ((0, n), (n, 0)), stats
    return stats["labelled"] == n


# ---------------------------------------------------------------------------------------------------- label files
def _qrels(path: Path, grades: dict, order=None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    keys = order or sorted(grades)
    text = "".join(f"{q} 0 {d} {grades[q, d]}\n" for q, d in keys)
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path


GRADES = {(f"q{i // 5}", f"d{i}"): i % 2 for i in range(N)}


def test_an_edited_label_file_is_read_again_not_served_its_old_labels(tmp_path, caplog):
    """One grade changed 0 -> 1 in the same file: every pair is labelled again from the file and the pair gets the
    new grade (a key of the file's name served the old one)."""
    path = _qrels(tmp_path / "llm.txt", GRADES)
    cache = tmp_path / "c.sqlite"
    before = L.label_pairs(L.FileLabeler(path, smoothing=0.1), "binary", make_pairs(N), cache, progress=False)
    assert before.loc[0, "p_1"] == pytest.approx(0.05)  # (q0, d0) grade 0
    _qrels(path, {**GRADES, ("q0", "d0"): 1})
    edited = L.FileLabeler(path, smoothing=0.1)
    assert edited.name == "file:llm@eps0.1"  # the readable name is the file's, as before
    stats = {}
    with caplog.at_level(logging.INFO, logger="irrepro.labels"):
        after = L.label_pairs(edited, "binary", make_pairs(N), cache, progress=False, stats=stats)
    assert stats["cached"] == 0 and after.loc[0, "p_1"] == pytest.approx(0.95)
    assert f"{N} pairs, 0 cached, {N} to label" in caplog.text


def test_labels_cached_under_a_label_file_s_bare_name_are_not_served(tmp_path):
    """A cache written when the file's name was its key: those rows are never adopted; the file is read again."""
    path = _qrels(tmp_path / "llm.txt", GRADES)
    lab = L.FileLabeler(path)
    cache = tmp_path / "c.sqlite"
    with L.LabelCache(cache) as c:
        c.put(lab.name, L.get_prompt("binary"), cache_keys(make_pairs(N)), np.tile([0.5, 0.5], (N, 1)))
    stats = {}
    out = L.label_pairs(lab, "binary", make_pairs(N), cache, progress=False, stats=stats)
    assert stats["cached"] == 0 and out.p_1.tolist() == [float(g) for g in GRADES.values()]


def test_two_label_files_of_one_name_keep_their_own_labels(tmp_path):
    a = _qrels(tmp_path / "a" / "llm.txt", GRADES)
    b = _qrels(tmp_path / "b" / "llm.txt", {k: 1 - g for k, g in GRADES.items()})
    assert L.FileLabeler(a).name == L.FileLabeler(b).name
    assert _relabels(L.FileLabeler(a), L.FileLabeler(b), tmp_path)


def test_label_file_identity_is_its_labels_and_smoothing(tmp_path):
    path = _qrels(tmp_path / "llm.txt", GRADES)
    # the same labels: another folder, compressed, other line order -> served
    moved = _qrels(tmp_path / "x" / "llm.txt.gz", GRADES, order=sorted(GRADES)[::-1])
    assert not _relabels(L.FileLabeler(path), L.FileLabeler(moved), tmp_path)
    assert not _relabels(L.FileLabeler(path, batch_size=2), L.FileLabeler(path, batch_size=5), tmp_path)
    # another smoothing under one given name -> labelled again
    assert _relabels(L.FileLabeler(path, name="llm", smoothing=0.1), L.FileLabeler(path, name="llm", smoothing=0.2),
                     tmp_path)


# ---------------------------------------------------------------------------------------------------- servers
def _answering(shift):
    """A fake server's answer: as many alternatives as the request asks (chat: top_logprobs; completions:
    logprobs), the grades first; log P("1") depends on the prompt's text and on ``shift`` (servers that answer
    differently)."""
    def answer(path, body):
        text = body["messages"][0]["content"] if "messages" in body else body["prompt"]
        k = body.get("top_logprobs") if "messages" in body else body.get("logprobs")
        lp1 = -0.1 - 0.05 * (len(text) % 11) - shift
        alts = [("1", lp1), ("0", -1.5), ("The", -3.0), ("A", -4.0), ("I", -5.0)][:k]
        if "messages" in body:
            return _chat_response([alts])
        return {"choices": [{"text": alts[0][0], "logprobs": {"tokens": [alts[0][0]], "token_logprobs": [alts[0][1]],
                                                              "top_logprobs": [dict(alts)]}}]}
    return answer


@pytest.fixture
def servers():
    a, b = FakeServer(_answering(0.0)), FakeServer(_answering(0.7))
    yield a, b
    a.close()
    b.close()


BASE = {"model": "m", "api_key_env": None, "top_logprobs": 2, "retry_delay": 0.01, "concurrency": 1}


@pytest.mark.parametrize("change", [
    {"model": "m2"}, {"endpoint": "completions"}, {"top_logprobs": 3}, {"max_tokens": 1},
    {"missing_logprob": "floor"}, {"missing_logprob": -20.0}, {"extra_body": {"seed": 1}},
    {"extra_body": {"temperature": 0.7}}, {"mode": "score"},
])
def test_a_server_request_parameter_changed_relabels(servers, change, tmp_path):
    a, _ = servers
    first = L.OpenAILabeler(base_url=a.url, **BASE)
    second = L.OpenAILabeler(base_url=a.url, **{**BASE, **change})
    if change.get("mode") == "score":  # no request: the key alone (scoring mode has its own test server)
        assert second.cache_key != first.cache_key
        return
    n = len(a.requests)
    assert _relabels(first, second, tmp_path)
    assert len(a.requests) == n + 2 * N  # the second labeler asked the server for every pair


def test_another_server_with_the_same_model_relabels(servers, tmp_path):
    """Same model name at another base_url, whose server answers differently: labelled again, by that server."""
    a, b = servers
    cache = tmp_path / "c.sqlite"
    first = L.label_pairs(L.OpenAILabeler(base_url=a.url, **BASE), "binary", make_pairs(N), cache, progress=False)
    stats = {}
    other = L.label_pairs(L.OpenAILabeler(base_url=b.url, **BASE), "binary", make_pairs(N), cache, progress=False,
                          stats=stats)
    assert stats["cached"] == 0 and len(b.requests) == N
    assert not np.allclose(other[["p_0", "p_1"]], first[["p_0", "p_1"]])


@pytest.mark.parametrize("change", [
    {"api_key": "sk-other"}, {"timeout": 5.0}, {"max_retries": 1}, {"retry_delay": 0.5}, {"concurrency": 3},
    {"batch_size": 2},
])
def test_what_does_not_change_a_reply_serves_the_cache(servers, change, tmp_path):
    a, _ = servers
    first = L.OpenAILabeler(base_url=a.url, **BASE)
    second = L.OpenAILabeler(base_url=a.url, **{**BASE, **change})
    n = len(a.requests)
    assert not _relabels(first, second, tmp_path)
    assert len(a.requests) == n + N  # the first labeler's requests only
    assert second.cache_key == first.cache_key and second.name == first.name == "openai:m"


def test_scoring_mode_identity():
    """mode score: the tokenizer URL, the chat template, the raw suffix prefix, extra_body and base_url are in the
    key; concurrency is not (no request is made to form the key)."""
    base = {"model": "m", "base_url": "http://127.0.0.1:1/v1", "api_key_env": None, "mode": "score"}
    key = L.OpenAILabeler(**base).cache_key
    raw = L.OpenAILabeler(**base, chat_template=False).cache_key
    assert key.startswith("openai-score:m#") and raw.startswith("openai-score:m@raw#")
    changed = [{"base_url": "http://127.0.0.1:2/v1"}, {"tokenize_url": "http://127.0.0.1:1/tok"},
               {"extra_body": {"seed": 2}}, {"name": "openai-score:m@raw", "chat_template": False}]
    assert len({key, *(L.OpenAILabeler(**{**base, **c}).cache_key for c in changed)}) == 1 + len(changed)
    assert L.OpenAILabeler(**base, chat_template=False, raw_suffix_prefix="\n").cache_key != raw
    assert L.OpenAILabeler(**base, concurrency=16, batch_size=512).cache_key == key


def test_a_served_model_is_keyed_on_its_weights_not_its_port(tmp_path):
    """serve: the job's server gets a new port each time (not in the key); the served weights, dtype and vLLM are."""
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(b"weights one")

    def lab(port=1, **serve):
        return L.OpenAILabeler("m", f"http://127.0.0.1:{port}/v1", api_key_env=None, mode="score",
                               serve={"model": str(folder), **serve})

    key = lab().cache_key
    assert lab(port=2).cache_key == key
    assert lab(dtype="bfloat16").cache_key != key
    # vLLM's CPU build in bfloat16: native and emulated bfloat16 give other numbers (irrepro.core.arithmetic)
    from irrepro.core import arithmetic as ar

    keys = set()
    for flags in ({"avx512_bf16"}, {"avx2"}):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(ar, "cpu_flags", lambda cpuinfo=None, f=flags: f)
            mp.delenv("ONEDNN_MAX_CPU_ISA", raising=False)
            keys.add(lab(dtype="bfloat16").cache_key)
            assert lab().cache_key == key  # float32: the same everywhere
    assert len(keys) == 2
    assert lab(extra=["--seed", "1"]).cache_key != key
    assert lab(requirement="vllm==0.1").cache_key != key
    (folder / "model.safetensors").write_bytes(b"weights two")
    assert lab().cache_key != key


# ---------------------------------------------------------------------------------------------------- local models
def test_hash_labeler_seed_is_in_the_key_under_a_given_name(tmp_path):
    assert L.HashLabeler(seed=3).cache_key == "hash:3"  # the default name carries the seed: the key as it was
    assert _relabels(L.HashLabeler(seed=1, name="h"), L.HashLabeler(seed=2, name="h"), tmp_path)
    assert not _relabels(L.HashLabeler(seed=1, name="h"), L.HashLabeler(seed=1, name="h", batch_size=2), tmp_path)


def test_hf_settings_that_change_the_model_input_are_in_the_key(tmp_path):
    """A local folder model: at the defaults the key stays name#<weights>; document truncation, the chat template,
    the raw suffix prefix and the dtype under a given name each relabel; batch size and prefix sharing serve."""
    pytest.importorskip("torch")
    from test_labels_robust import _tiny_folder

    folder = str(_tiny_folder(tmp_path / "model", seed=0))

    def hf(**kw):
        return L.HFLabeler(folder, kind="causal", **{"batch_size": 4, **kw})

    base = hf()
    assert base.cache_key == f"{base.name}#{base.weights_id[:16]}"
    for change in ({"max_doc_tokens": 8}, {"chat_template": False}):
        assert _relabels(base, hf(**change), tmp_path), change
    raw = hf(chat_template=False)
    assert _relabels(raw, hf(chat_template=False, raw_suffix_prefix="\n"), tmp_path)
    assert _relabels(hf(name="tiny"), hf(name="tiny", dtype="bfloat16"), tmp_path)
    assert not _relabels(base, hf(batch_size=2, share_prefix=False), tmp_path)


def test_hf_model_without_local_weights_keys_on_its_id_and_settings():
    """A model passed as an object (no weight files to hash): its id joins the settings hash when any is set."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from test_labels import _byte_tokenizer

    tok = _byte_tokenizer()
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(vocab_size=len(tok), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                   num_attention_heads=2, num_key_value_heads=1, pad_token_id=0, bos_token_id=2,
                                   eos_token_id=1)
    model = transformers.LlamaForCausalLM(cfg)
    chat = L.HFLabeler("tiny", tokenizer=tok, model_obj=model)
    raw = L.HFLabeler("tiny", tokenizer=tok, model_obj=model, chat_template=False)
    assert chat.cache_key == "hf:tiny" and raw.name == "hf:tiny" and raw.cache_key != chat.cache_key


# ---------------------------------------------------------------------------------------------------- server replies
def _broken(reply_for_pair_3):
    """A fake server answering every pair in full except the one whose text names ``document 3``."""
    good = _answering(0.0)

    def answer(path, body):
        text = body["messages"][0]["content"] if "messages" in body else body["prompt"]
        return reply_for_pair_3(body) if "document 3 " in text else good(path, body)
    return answer


BAD_REPLIES = {
    # fewer alternatives than top_logprobs asks, one grade among them: [0.5, 0.5] by the lowest alternative's floor
    "incomplete": (lambda body: _chat_response([[("1", -0.2)]]),
                   r"the reply is incomplete: generated position 0 lists 1 alternative\(s\) \['1'\], without grade\(s\) "
                   r"\['0'\], where top_logprobs asks 2"),
    "no grade": (lambda body: _chat_response([[("The", -0.1), ("I", -2.0)]]),
                 r"none of the 1 generated position\(s\) lists a grade \['0', '1'\]"),
    "empty logprobs": (lambda body: {"choices": [{"index": 0, "logprobs": {"content": []}}]},
                       r"no generated position with log-probabilities \(empty logprobs\)"),
    "null logprobs": (lambda body: {"choices": [{"index": 0, "logprobs": None}]}, r"logprobs are null"),
    "truncated JSON": (lambda body: b'{"choices": [{"index": 0, "logprobs": {"content": [{"tok',
                       r"/chat/completions: the reply \(HTTP 200, \d+ bytes\) is not JSON \(Unterminated string"),
}


@pytest.mark.parametrize("case", sorted(BAD_REPLIES))
def test_a_reply_without_a_full_distribution_is_an_error_and_nothing_is_cached(case, tmp_path):
    reply, message = BAD_REPLIES[case]
    srv = FakeServer(_broken(reply))
    cache = tmp_path / "c.sqlite"
    try:
        lab = L.OpenAILabeler("m", srv.url, api_key_env=None, top_logprobs=2, retry_delay=0.01)
        with pytest.raises(L.LabelerError, match=r"labeler 'openai:m', pair \(query 'q0', document 'd3'\): "
                                                 rf"http://127\.0\.0\.1:\d+/v1.*{message}.*no label is written"):
            L.label_pairs(lab, "binary", make_pairs(N), cache, progress=False)
        with L.LabelCache(cache) as c:
            assert c.count(lab.cache_key) == 0
    finally:
        srv.close()


def test_an_absent_grade_gets_missing_logprob_only_when_configured_and_is_counted(tmp_path, caplog):
    """A full top-2 list without grade 0: an error by default; with missing_logprob (a value or floor) the grade
    gets it, the log counts the pairs filled, and the setting is part of the key."""
    srv = FakeServer(_broken(lambda body: _chat_response([[("1", -0.2), ("The", -2.5)]])))
    try:
        strict = L.OpenAILabeler("m", srv.url, api_key_env=None, top_logprobs=2, retry_delay=0.01)
        with pytest.raises(L.LabelerError, match=r"without grade\(s\) \['0'\] \(the top 2\); set missing_logprob"):
            L.label_pairs(strict, "binary", make_pairs(N), tmp_path / "c.sqlite", progress=False)
        keys = {strict.cache_key}
        for value, p1 in (("floor", 1 / (1 + np.exp(-2.5 + 0.2))), (-20.0, 1 / (1 + np.exp(-20 + 0.2)))):
            lab = L.OpenAILabeler("m", srv.url, api_key_env=None, top_logprobs=2, missing_logprob=value)
            keys.add(lab.cache_key)
            with caplog.at_level(logging.INFO, logger="irrepro.labels"):
                out = L.label_pairs(lab, "binary", make_pairs(N), tmp_path / "c.sqlite", progress=False)
            assert out.loc[out.doc_id == "d3", "p_1"].item() == pytest.approx(p1)
            assert f"1 of {N} pair(s) had 1 grade(s) absent from the top-2 alternatives, given missing_logprob " \
                   f"{value}" in caplog.text
        assert len(keys) == 3
        for bad in (0.5, float("-inf"), float("nan"), "flor", True):
            with pytest.raises(InputError, match=f"missing_logprob {bad!r}: expected null"):
                L.OpenAILabeler("m", srv.url, api_key_env=None, missing_logprob=bad)
    finally:
        srv.close()


# ---------------------------------------------------------------------------------------------------- names
REPO = Path(__file__).resolve().parents[1]


def _test_config():
    return yaml.safe_load((REPO / "config" / "test.yaml").read_text())


@pytest.mark.parametrize("where", ["labels.labelers", "labels.collections", "imports", "collections",
                                   "stats.baseline", "vb.collections"])
@pytest.mark.parametrize("name", ["../../../escape", "..", "a/b", ".hidden", "-x", ""])
def test_a_config_name_that_would_leave_its_folder_is_refused_naming_the_key(where, name):
    """Every config name that becomes a file or folder name obeys the one pattern (config.schema.yaml's
    $defs/name), refused at validation naming the dotted key."""
    from irrepro.schema import validate_config

    cfg = _test_config()
    node = cfg
    for k in where.split("."):
        if node.get(k) is None:
            node[k] = {}
        node = node[k]
    node[name] = copy.deepcopy(next(iter(node.values()))) if node else "x"  # a value as valid as the others
    pattern = re.escape("'^[A-Za-z0-9][A-Za-z0-9._-]*$'")
    with pytest.raises(InputError, match=rf"^config key {re.escape(where)}: name {re.escape(repr(name))} does not "
                                         rf"match {pattern}: names become file and folder names"):
        validate_config(cfg, REPO / "workflow" / "schemas")


def test_the_name_pattern_is_defined_once():
    """Every schema's names refer to config.schema.yaml's $defs/name (a collection's grade map keys are numbers)."""
    found = []

    def walk(node, path):
        if isinstance(node, dict):
            if "propertyNames" in node:
                found.append((path, node["propertyNames"]))
            for k, v in node.items():
                walk(v, f"{path}.{k}")
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, f"{path}[{i}]")

    for f in sorted((REPO / "workflow" / "schemas").glob("*.schema.yaml")):
        walk(yaml.safe_load(f.read_text()), f.name)
    names = [(p, s) for p, s in found if "grades" not in p]
    assert len(names) >= 10
    for path, spec in names:
        assert spec in ({"$ref": "#/$defs/name"}, {"$ref": "config.schema.yaml#/$defs/name"}), path
