"""api.spools: an export read once and shared by its readers while it is being sent."""

from __future__ import annotations

from api.extension import zolve
from api.spools import Spools
from core.waiting import SPOOL_CHUNK


def _parts(count: int, size: int, made: list[int]):
    def parts():
        made.append(1)
        for i in range(count):
            yield bytes([i % 256]) * size

    return parts


def test_a_small_spool_stays_in_memory_and_a_large_one_goes_to_a_file() -> None:
    spools = Spools(in_memory=1000)
    small = spools.fill("small", _parts(3, 100, []))
    large = spools.fill("large", _parts(4, SPOOL_CHUNK // 2, []))
    assert small.spool.memory is not None and small.spool.file is None and small.size == 300
    assert large.spool.file is not None and large.size == 2 * SPOOL_CHUNK
    assert b"".join(iter(small.read, b"")) == b"\x00" * 100 + b"\x01" * 100 + b"\x02" * 100
    whole = b"".join(iter(large.read, b""))
    assert len(whole) == 2 * SPOOL_CHUNK and whole.endswith(b"\x03" * 10)
    small.close()
    large.close()
    assert len(spools) == 0 and large.spool.file is None


def test_readers_of_one_key_share_its_spool_each_at_its_own_offset_until_the_last_closes() -> None:
    spools, made = Spools(in_memory=10), []
    first = spools.fill("k", _parts(3, SPOOL_CHUNK, made))
    assert first.read() == b"\x00" * SPOOL_CHUNK
    second = spools.reader("k")
    assert second is not None and second.read() == b"\x00" * SPOOL_CHUNK
    assert first.read() == b"\x01" * SPOOL_CHUNK and made == [1]
    first.close()
    first.close()  # once only
    assert spools.reader("other") is None and len(spools) == 1
    assert b"".join(iter(second.read, b"")) == b"\x01" * SPOOL_CHUNK + b"\x02" * SPOOL_CHUNK
    second.close()
    assert len(spools) == 0 and spools.reader("k") is None


def test_a_spool_written_twice_at_once_keeps_the_first_and_drops_the_second() -> None:
    spools = Spools(in_memory=0)
    first = spools.fill("k", _parts(1, 10, []))
    second = spools.fill("k", _parts(1, 10, []))
    assert second.spool is first.spool and first.spool.readers == 2
    first.close()
    second.close()
    assert len(spools) == 0


def test_two_clients_exporting_one_enumeration_read_it_once(
    make_app, client, make_key, worker, wait_job, monkeypatch
) -> None:
    """A copy of another client's enumeration shares its rows: while one export is being read, the other
    client's is served from the same spool."""
    import api.rows

    renders: list[str] = []
    render = api.rows._rendered
    monkeypatch.setattr(
        api.rows, "_rendered", lambda job, *rest: (renders.append(str(job.id)), render(job, *rest))[1]
    )

    owner, other = make_key(), make_key()
    body = {"kind": "planetx.enumerate", "params": {"mode": "standard"}}
    job = wait_job(owner, client.post("/jobs", json=body, headers=owner).get_json()["id"])
    copy = wait_job(other, client.post("/jobs", json=body, headers=other).get_json()["id"])
    assert copy["id"] != job["id"]
    app = make_app(export_spool_bytes=0)
    web = app.test_client()
    reading = web.get(job["links"]["csv"], headers=owner, buffered=False)
    try:
        assert len(zolve(app).spools) == 1
        shared = web.get(copy["links"]["csv"], headers=other, buffered=False)
        assert len(zolve(app).spools) == 1 and renders == [job["id"]]
        assert shared.get_data() == reading.get_data() != b""
        shared.close()
    finally:
        reading.close()
    assert len(zolve(app).spools) == 0


def test_an_export_that_finds_its_spool_filled_leaves_the_line_at_once(app) -> None:
    """A request that waited for its turn to read, and then found the same export filled by another,
    must not stay at the head of the line while its answer is sent: the next in line gets the turn."""
    from api.rows import _leave_the_line
    from api.slots import Turns
    from core.waiting import Rerun, Wake

    turns, holder, waited, behind = Turns(1), Wake(), Wake(), Wake()
    assert turns.take(holder) and not turns.take(waited) and not turns.take(behind)
    rerun = Rerun()
    rerun.kept["export turn"] = waited
    with app.test_request_context():
        extension = zolve(app)
        previous, extension.export_reads = extension.export_reads, turns
        try:
            _leave_the_line(rerun)
        finally:
            extension.export_reads = previous
    turns.give_back()
    assert behind.is_set() and turns.take(behind)
