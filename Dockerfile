# One image for every role: `zolve api`, `zolve worker`, `zolve migrate`.
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
# the dependencies exactly as CI installed and tested them (requirements.lock: pinned, with hashes), in a
# layer of their own that a code change does not rebuild
COPY requirements.lock ./
RUN pip install --no-cache-dir --require-hashes -r requirements.lock
COPY pyproject.toml README.md alembic.ini ./
COPY api ./api
COPY workers ./workers
COPY schemas ./schemas
COPY puzzles ./puzzles
COPY store ./store
COPY core ./core
COPY kinds ./kinds
COPY services ./services
COPY migrations ./migrations
COPY zolve ./zolve
RUN pip install --no-cache-dir --no-deps . && useradd --create-home --uid 1000 zolve
# numeric, so that Kubernetes' runAsNonRoot can check it
USER 1000
EXPOSE 8000
CMD ["zolve", "api", "--host", "0.0.0.0", "--port", "8000"]
