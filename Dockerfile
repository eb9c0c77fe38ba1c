# One image for every role: `zolve api`, `zolve worker`, `zolve migrate`.
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
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
RUN pip install --no-cache-dir . && useradd --create-home zolve
USER zolve
EXPOSE 8000
CMD ["zolve", "api", "--host", "0.0.0.0", "--port", "8000"]
