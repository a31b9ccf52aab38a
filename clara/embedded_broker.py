"""The embedded broker: kombu's filesystem transport, with each message appearing whole.

kombu's transport writes a message in place: it creates `<time>_<uuid>.<queue>.msg` in the queue
folder, then writes it. A worker listing the folder between the two finds an empty file, reads
it, fails to parse it and stops ("Unrecoverable error: JSONDecodeError"), and with it every job,
alerts' deliveries included, until something restarts it (seen under bench/load_test.py's load).
Here a message is written under a name the worker skips (a leading dot: no queue's suffix) and
renamed into place when complete; a rename within a folder is atomic, so a worker sees a message
whole or not at all.

And a worker takes a message by renaming it aside in the same folder (`_get`), from a listing
it makes once for a run of messages. kombu's own `_get` listed and sorted the whole folder for
every message, scanned it with `list.pop(0)` and copied the message to the temporary folder:
with thousands waiting each job took longer the longer the queue was, so at 1,000 people a
backlog fed itself (bench/load_test.py, "jobs waiting"). Everything else is kombu's.
"""

import collections
import os
import shutil
import uuid
from queue import Empty
from time import monotonic_ns

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import bytes_to_str, str_to_bytes
from kombu.utils.json import dumps, loads


class Channel(filesystem.Channel):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Per queue: the names of its messages from the last listing, oldest first.
        self._listed: dict[str, collections.deque[str]] = {}

    def _get(self, queue):
        """The oldest message of `queue`: claimed by renaming it to a name no worker lists (atomic
        within the folder: two workers never both take one message), read, and deleted. The folder
        is listed again only when the last listing's messages are all taken."""
        listed = self._listed.setdefault(queue, collections.deque())
        if not listed:
            wanted = f"{queue}.msg"
            listed.extend(
                sorted(
                    name
                    for name in os.listdir(self.data_folder_in)
                    if not name.startswith(".") and name.partition(".")[2] == wanted
                )
            )
        while listed:
            name = listed.popleft()
            path = os.path.join(self.data_folder_in, name)
            claimed = os.path.join(self.data_folder_in, f".{name}.{uuid.uuid4().hex}.taken")
            try:
                if os.stat(path).st_size == 0:
                    # Created and not yet written, by a sender on kombu's own transport (which
                    # writes in place): left for the next listing, not taken empty.
                    continue
                os.rename(path, claimed)
            except OSError:
                continue  # another worker took it since the listing
            try:
                with open(claimed, "rb") as f:
                    payload = f.read()
                if self.store_processed:
                    shutil.move(claimed, os.path.join(self.processed_folder, name))
                else:
                    os.remove(claimed)
            except OSError as exc:
                raise ChannelError(f"Cannot read file {claimed!r} from queue.") from exc
            return loads(bytes_to_str(payload))
        raise Empty()

    def _put(self, queue, payload, **kwargs):
        """Put `payload` onto `queue`: written aside, then renamed into the queue folder."""
        # The machine's monotonic clock in nanoseconds, zero-padded: names sort in the order the
        # messages were sent (kombu's milliseconds, unpadded, put messages of one millisecond in
        # random order, and sorted wrongly when their number of digits grew).
        name = f"{monotonic_ns():020d}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        partial = os.path.join(self.data_folder_out, f".{name}.part")
        try:
            with open(partial, "wb", buffering=0) as f:
                f.write(str_to_bytes(dumps(payload)))
            os.replace(partial, final)
        except OSError as exc:
            raise ChannelError(f"Cannot add file {final!r} to directory") from exc


class Transport(filesystem.Transport):
    Channel = Channel
