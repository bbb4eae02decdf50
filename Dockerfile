# The kb-qa image: the API (writer or read-only replica) and, with `chroma run`, the Chroma
# server of the same chromadb version. The embedding model (MiniLM int8, 23 MB) ships inside
# kb-qa (kb_qa/data/minilm-int8.onnx), so a container downloads nothing when it starts;
# the build checks that by loading it with the network-off switches set below.
#
#   docker build -t kb-qa .
#   docker run --rm -p 8321:8321 -e KBQA_CHROMA_URL=http://chroma:8000 -e KBQA_WORKSPACE=docs kb-qa
# The Python the test suite runs on here.
FROM python:3.11-slim

ENV PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HF_HUB_OFFLINE=1 \
    ORT_DISABLE_TELEMETRY=1 \
    LITELLM_LOCAL_MODEL_COST_MAP=True \
    ANONYMIZED_TELEMETRY=False \
    KBQA_HOST=0.0.0.0

WORKDIR /src
COPY pyproject.toml README.md LICENSE NOTICE ./
COPY kb_qa kb_qa
COPY mkdocs_plugin mkdocs_plugin
COPY widget widget
RUN pip install '.[llm]' \
    && python -c "from kb_qa.index.embeddings import load_embedder; load_embedder('minilm').embed_query('ready')" \
    && useradd --create-home --uid 10001 kbqa \
    && mkdir -p /data /index /feedback \
    && chown kbqa:kbqa /data /index /feedback

USER kbqa
WORKDIR /home/kbqa
EXPOSE 8321
# No vault argument, KBQA_CHROMA_URL and KBQA_WORKSPACE set: a read-only replica.
# The writer runs `kb-qa watch /docs` (see compose.yaml).
ENTRYPOINT ["kb-qa"]
CMD ["serve"]
