"""The server's stdin and stdout served by the event loop (capy.server.stdio), over real pipes."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import textwrap

from capy.server.stdio import LineReader, LineWriter

# A line server on capy's transport: it answers each line with the line in capitals, prints
# a stray line while serving (which must not reach the wire), and prints one after it ends
# (which must, fd 1 being restored).
ECHO_SERVER = textwrap.dedent(
    """
    import asyncio
    from capy.server.stdio import loop_stdio

    async def main():
        async with loop_stdio() as streams:
            assert streams is not None, "stdin and stdout are pipes here"
            reader, writer = streams
            print("stray output while serving", flush=True)
            async for line in reader:
                await writer.write(line.upper())
                await writer.flush()
        print("after serving", flush=True)

    asyncio.run(main())
    """
)


def test_a_server_on_the_loop_transport_answers_and_keeps_the_wire_clean():
    # Messages split across writes, several in one write, and a last one without a newline.
    sent = b'{"a": 1}\n{"b"' + b': 2}\n{"c": 3}\n' + b'{"d": "' + "é".encode() + b'"}'
    done = subprocess.run(
        [sys.executable, "-c", ECHO_SERVER], input=sent, capture_output=True, timeout=60
    )
    assert done.returncode == 0, done.stderr.decode()
    # The last message came without its newline, so its answer has none either.
    lines = done.stdout.decode().splitlines()
    assert lines == ['{"A": 1}', '{"B": 2}', '{"C": 3}', '{"D": "É"}after serving']
    assert b"stray output while serving" in done.stderr


def test_the_loop_transport_serves_a_client_that_gives_sockets():
    """Node's child processes get a socket pair per stdio stream, not pipes."""
    give, given = socket.socketpair()
    take, taken = socket.socketpair()
    with give, take:
        server = subprocess.Popen(
            [sys.executable, "-c", ECHO_SERVER], stdin=given, stdout=taken, stderr=subprocess.PIPE
        )
        given.close()
        taken.close()
        give.sendall(b'{"x": 1}\n{"y": 2}\n')
        give.shutdown(socket.SHUT_WR)
        answer = b""
        while chunk := take.recv(4096):
            answer += chunk
        assert server.wait(timeout=60) == 0
        assert server.stderr is not None and b"stray" in server.stderr.read()
    assert answer.decode().splitlines() == ['{"X": 1}', '{"Y": 2}', "after serving"]


def test_the_loop_transport_steps_aside_where_stdin_is_not_a_pipe(tmp_path):
    """A file on stdin (or a terminal) keeps the SDK's own transport."""
    script = textwrap.dedent(
        """
        import asyncio
        from capy.server.stdio import loop_stdio

        async def main():
            async with loop_stdio() as streams:
                print("none" if streams is None else "loop")

        asyncio.run(main())
        """
    )
    requests = tmp_path / "requests.jsonl"
    requests.write_text('{"a": 1}\n')
    with requests.open("rb") as stdin:
        done = subprocess.run(
            [sys.executable, "-c", script], stdin=stdin, capture_output=True, timeout=60
        )
    assert done.stdout.decode().strip() == "none", done.stderr.decode()
    # One socket for both (inetd style): its requests would read as the client hanging up.
    ours, theirs = socket.socketpair()
    with ours, theirs:
        done = subprocess.run(
            [sys.executable, "-c", script], stdin=theirs, stdout=theirs, timeout=60
        )
        assert done.returncode == 0
        assert ours.recv(100).decode().strip() == "none"


def test_a_large_reply_reaches_a_slow_reader_whole():
    """flush returns only once the pipe took every byte: nothing is left in a buffer that the
    server's exit would drop."""

    async def run() -> bytes:
        loop = asyncio.get_running_loop()
        read_fd, write_fd = os.pipe()
        writer = LineWriter()
        transport, _ = await loop.connect_write_pipe(lambda: writer, os.fdopen(write_fd, "wb", 0))
        reply = ("x" * 1_000_000) + "\n"

        async def slow_read() -> bytes:
            got = bytearray()
            with os.fdopen(read_fd, "rb", 0) as pipe:
                while chunk := await asyncio.to_thread(pipe.read, 4096):
                    got += chunk
                    await asyncio.sleep(0)
            return bytes(got)

        reading = asyncio.create_task(slow_read())
        await writer.write(reply)
        await writer.flush()
        assert transport.get_write_buffer_size() == 0
        transport.close()
        return await reading

    received = asyncio.run(run())
    assert len(received) == 1_000_001 and received.endswith(b"x\n")


def test_the_reader_stops_reading_ahead_of_a_slow_server():
    """A client that sends many messages at once waits for the server, as with a file read."""

    async def run() -> tuple[bool, int]:
        loop = asyncio.get_running_loop()
        read_fd, write_fd = os.pipe()
        reader = LineReader()
        await loop.connect_read_pipe(lambda: reader, os.fdopen(read_fd, "rb", 0))
        os.write(write_fd, b"".join(b'{"n": %d}\n' % n for n in range(500)))
        os.close(write_fd)
        await asyncio.sleep(0.2)
        paused = reader._paused
        count = 0
        async for _ in reader:
            count += 1
        return paused, count

    paused, count = asyncio.run(run())
    assert paused and count == 500
