"""The embedded broker (clara/embedded_broker.py): a worker never reads a message half-written."""

import threading
from queue import Empty

import pytest
from kombu import Connection

from clara import embedded_broker


def _connection(folder) -> Connection:
    options = {
        "data_folder_in": str(folder),
        "data_folder_out": str(folder),
        "store_processed": False,
        "control_folder": str(folder / "control"),
    }
    return Connection(
        "filesystem://", transport=embedded_broker.Transport, transport_options=options
    )


def test_a_message_is_renamed_into_the_queue_whole(tmp_path):
    with _connection(tmp_path) as connection:
        channel = connection.default_channel
        channel._put("jobs", {"body": "x" * 10_000})
        names = [p.name for p in tmp_path.iterdir() if p.is_file()]
        assert len(names) == 1 and names[0].endswith(".jobs.msg"), names  # nothing left aside
        assert channel._get("jobs") == {"body": "x" * 10_000}


def test_a_reader_racing_the_writer_gets_every_message_whole(tmp_path):
    # A worker polling while the web writes: with kombu's own write (the file created, then
    # written) the reader could take an empty file and stop on a JSONDecodeError.
    count = 300
    got, failures = [], []
    with _connection(tmp_path) as writer_connection, _connection(tmp_path) as reader_connection:
        writer, reader = writer_connection.default_channel, reader_connection.default_channel
        done = threading.Event()

        def read():
            while len(got) < count and not (done.is_set() and not _any(tmp_path)):
                try:
                    got.append(reader._get("jobs"))
                except Empty:
                    continue
                except Exception as exc:  # noqa: BLE001 - what the worker would die of
                    failures.append(exc)
                    return

        thread = threading.Thread(target=read)
        thread.start()
        for n in range(count):
            writer._put("jobs", {"n": n, "body": "y" * 50_000})
        done.set()
        thread.join(timeout=60)
    assert not failures, failures[:1]
    assert sorted(message["n"] for message in got) == list(range(count))


def _any(folder) -> bool:
    return any(p.name.endswith(".jobs.msg") for p in folder.iterdir())


def test_a_backlog_is_taken_oldest_first_from_one_listing_of_the_folder(tmp_path, monkeypatch):
    # kombu's own reader listed and sorted the whole folder for every message: with thousands
    # waiting, each job cost more the longer the queue, and a backlog fed itself.
    with _connection(tmp_path) as connection:
        channel = connection.default_channel
        for n in range(500):
            channel._put("jobs", {"n": n})
            channel._put("other", {"n": n})
        listings = []
        real_listdir = embedded_broker.os.listdir

        def counting_listdir(path):
            listings.append(path)
            return real_listdir(path)

        monkeypatch.setattr(embedded_broker.os, "listdir", counting_listdir)
        got = [channel._get("jobs")["n"] for _ in range(500)]
        assert got == list(range(500))
        assert len(listings) == 1
        with pytest.raises(Empty):  # a taken message never comes back
            channel._get("jobs")
        # The other queue's messages are where they were.
        assert sum(1 for p in tmp_path.iterdir() if p.name.endswith(".other.msg")) == 500


def test_two_workers_taking_from_one_queue_never_take_one_message_twice(tmp_path):
    count = 400
    with _connection(tmp_path) as writer_connection:
        for n in range(count):
            writer_connection.default_channel._put("jobs", {"n": n})
    got: list[int] = []
    lock = threading.Lock()

    def take():
        with _connection(tmp_path) as connection:
            channel = connection.default_channel
            while True:
                try:
                    message = channel._get("jobs")
                except Empty:
                    return
                with lock:
                    got.append(message["n"])

    workers = [threading.Thread(target=take) for _ in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
    assert sorted(got) == list(range(count))  # each once: none lost, none twice
    assert not [p.name for p in tmp_path.iterdir() if p.is_file()]  # nothing left aside


def test_a_message_created_and_not_yet_written_is_left_for_later(tmp_path):
    # kombu's own transport (a sender not configured with this one) creates the file, then
    # writes it: an empty message is not taken (the worker would stop on it), and is taken once
    # written.
    with _connection(tmp_path) as connection:
        channel = connection.default_channel
        empty = tmp_path / "0000_kombu.jobs.msg"
        empty.touch()
        with pytest.raises(Empty):  # an empty message is not taken
            channel._get("jobs")
        assert empty.exists()
        empty.write_text('{"n": 1}')
        assert channel._get("jobs") == {"n": 1}


def test_with_store_processed_a_taken_message_is_kept_in_the_processed_folder(tmp_path):
    processed = tmp_path / "processed"
    processed.mkdir()
    options = {
        "data_folder_in": str(tmp_path),
        "data_folder_out": str(tmp_path),
        "store_processed": True,
        "processed_folder": str(processed),
        "control_folder": str(tmp_path / "control"),
    }
    with Connection(
        "filesystem://", transport=embedded_broker.Transport, transport_options=options
    ) as connection:
        channel = connection.default_channel
        channel._put("jobs", {"n": 7})
        assert channel._get("jobs") == {"n": 7}
    assert [p.name.endswith(".jobs.msg") for p in processed.iterdir()] == [True]
    assert not [p for p in tmp_path.iterdir() if p.is_file()]
