package io.strata.common.grpc;

import com.google.protobuf.ByteOutput;
import com.google.protobuf.ByteString;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.Parser;
import com.google.protobuf.UnsafeByteOperations;
import io.grpc.Detachable;
import io.grpc.Drainable;
import io.grpc.HasByteBuffer;
import io.grpc.KnownLength;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.protobuf.ProtoUtils;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.UnaryOperator;

/**
 * A gRPC marshaller for a message that carries one large {@code bytes} field of block data (the "chunk")
 * beside small fields, moving the chunk without heap copies where grpc-java lets it.
 *
 * <p>Sending: {@link #stream} serialises the message without its chunk by normal protobuf (so any other
 * field, present or added later, travels unchanged), appends the chunk's tag and length, and returns a
 * {@link Drainable} {@link KnownLength} stream: gRPC's framer drains it, and the chunk's bytes go straight
 * from the chunk's own memory (the caller's array, or a direct buffer via a small per-thread scratch array,
 * since gRPC's target is an {@link OutputStream}) into the transport's buffer. A sender that lent the chunk's
 * memory registers {@link #onWritten}; it runs once when gRPC closes the stream (the bytes are then in the
 * transport's own buffers), or at {@link #forgetWritten} when the message was never streamed (the call was
 * cancelled first).
 *
 * <p>Receiving: when the transport's stream is {@link Detachable} and {@link HasByteBuffer} (grpc-netty),
 * {@link #parse} detaches it and parses over its buffers, cutting the chunk out as a slice (a rope over
 * several buffers when it spans HTTP/2 frames), so the parsed chunk references the transport's (Netty's)
 * memory and no byte of it is copied. The message then holds that memory until {@link #release} is called
 * for it: the receiver copies the chunk out once and releases. Other streams (in-process transport) are
 * parsed by protobuf's own marshaller; {@link #release} is then harmless.
 *
 * <p>Threading: thread-safe; one instance serves many calls. The identity maps hold only messages in
 * flight (a sent message until it is written, a received one until released).
 *
 * @param <T> the message
 */
public final class ChunkMarshaller<T extends Message> implements MethodDescriptor.PrototypeMarshaller<T> {
  private static final int SCRATCH = 64 * 1024;
  private static final ThreadLocal<byte[]> SCRATCH_ARRAY = ThreadLocal.withInitial(() -> new byte[SCRATCH]);

  private final T prototype;
  private final Parser<T> parser;
  private final MethodDescriptor.Marshaller<T> plain;
  private final int chunkField;
  private final Function<T, ByteString> chunkOf;
  private final UnaryOperator<T> withoutChunk;
  private final BiFunction<T, ByteString, T> withChunk;
  private final Map<T, InputStream> unreleased = Collections.synchronizedMap(new IdentityHashMap<>());
  private final Map<T, Runnable> written = Collections.synchronizedMap(new IdentityHashMap<>());
  private final AtomicLong aliasedParses = new AtomicLong();
  private final AtomicLong oneCopyParses = new AtomicLong();

  /**
   * @param prototype the message's default instance
   * @param chunkField the chunk's field number
   * @param chunkOf reads the chunk of a message
   * @param withoutChunk the message with its chunk cleared (every other field kept)
   * @param withChunk the message with its chunk set (every other field kept)
   */
  @SuppressWarnings("unchecked")
  public ChunkMarshaller(T prototype, int chunkField, Function<T, ByteString> chunkOf, UnaryOperator<T> withoutChunk,
      BiFunction<T, ByteString, T> withChunk) {
    this.prototype = prototype;
    this.parser = (Parser<T>) prototype.getParserForType();
    this.plain = ProtoUtils.marshaller(prototype);
    this.chunkField = chunkField;
    this.chunkOf = chunkOf;
    this.withoutChunk = withoutChunk;
    this.withChunk = withChunk;
  }

  @Override
  @SuppressWarnings("unchecked")
  public Class<T> getMessageClass() {
    return (Class<T>) prototype.getClass();
  }

  @Override
  public T getMessagePrototype() {
    return prototype;
  }

  /** Runs {@code release} once gRPC has written {@code message} (or at {@link #forgetWritten}). */
  public void onWritten(T message, Runnable release) {
    written.put(message, release);
  }

  /**
   * Called by the sender after handing {@code message} to gRPC: if gRPC never streamed it (the call was
   * already cancelled), runs its release now. Harmless when it was streamed.
   */
  public void forgetWritten(T message) {
    Runnable r = written.remove(message);
    if (r != null) {
      r.run();
    }
  }

  /** Frees the transport memory a received message references (no-op for one parsed by copying). */
  public void release(T message) {
    InputStream s = unreleased.remove(message);
    if (s != null) {
      closeQuietly(s);
    }
  }

  /** Received messages not yet released, plus sent ones not yet written (for leak tests). */
  public int outstanding() {
    return unreleased.size() + written.size();
  }

  /** Messages parsed over the transport's buffers (not copied) so far. */
  public long aliasedParses() {
    return aliasedParses.get();
  }

  /**
   * Messages whose transport buffers could not be exposed (grpc-netty's frames that straddle two socket
   * reads sit in a composite buffer, and then the whole message reports no byte buffers): read into one
   * array, the chunk sliced out of it (one copy, where protobuf's own parse makes two).
   */
  public long oneCopyParses() {
    return oneCopyParses.get();
  }

  @Override
  public InputStream stream(T value) {
    Runnable release = written.remove(value);
    ByteString chunk = chunkOf.apply(value);
    if (chunk.isEmpty()) {
      return new ChunkStream(value.toByteArray(), ByteString.EMPTY, release);
    }
    T rest = withoutChunk.apply(value);
    int restSize = rest.getSerializedSize();
    int size = chunk.size();
    byte[] head = new byte[restSize + CodedOutputStream.computeTagSize(chunkField)
        + CodedOutputStream.computeUInt32SizeNoTag(size)];
    CodedOutputStream out = CodedOutputStream.newInstance(head);
    try {
      rest.writeTo(out);
      out.writeTag(chunkField, 2); // WireFormat.WIRETYPE_LENGTH_DELIMITED
      out.writeUInt32NoTag(size);
      out.checkNoSpaceLeft();
    } catch (IOException e) {
      throw new IllegalStateException("Serialising into an array of its exact size failed", e);
    }
    return new ChunkStream(head, chunk, release);
  }

  @Override
  public T parse(InputStream stream) {
    if (!(stream instanceof KnownLength && stream instanceof Detachable && stream instanceof HasByteBuffer
        && ((HasByteBuffer) stream).byteBufferSupported())) {
      if (!(stream instanceof KnownLength)) {
        return plain.parse(stream); // the in-process transport may hand over any stream
      }
      try {
        byte[] all = stream.readNBytes(stream.available());
        T message = parseAliased(UnsafeByteOperations.unsafeWrap(all));
        oneCopyParses.incrementAndGet();
        return message;
      } catch (IOException e) {
        throw Status.INTERNAL.withDescription("Cannot read a message from the transport").withCause(e)
            .asRuntimeException();
      }
    }
    InputStream detached = null;
    try {
      int size = stream.available();
      detached = ((Detachable) stream).detach();
      // The mark keeps the buffers alive while skip walks over them; reset rewinds to the start.
      detached.mark(size);
      List<ByteString> parts = new ArrayList<>();
      while (detached.available() > 0) {
        ByteBuffer b = ((HasByteBuffer) detached).getByteBuffer();
        if (b == null || !b.hasRemaining()) {
          throw new IOException("The transport's stream gave no buffer with " + detached.available() + " bytes left");
        }
        parts.add(UnsafeByteOperations.unsafeWrap(b));
        detached.skip(b.remaining());
      }
      detached.reset();
      T message = parseAliased(ByteString.copyFrom(parts));
      aliasedParses.incrementAndGet();
      if (chunkOf.apply(message).isEmpty()) {
        return message; // nothing references the buffers
      }
      unreleased.put(message, detached);
      detached = null;
      return message;
    } catch (InvalidProtocolBufferException e) {
      throw Status.INTERNAL.withDescription("Invalid protobuf byte sequence").withCause(e).asRuntimeException();
    } catch (IOException e) {
      throw Status.INTERNAL.withDescription("Cannot read a message from the transport").withCause(e)
          .asRuntimeException();
    } finally {
      if (detached != null) {
        closeQuietly(detached);
      }
    }
  }

  /**
   * Parses {@code all} (a rope over the transport's buffers) so that the chunk is a slice of it: the
   * top-level fields are walked here, the chunk's extent is cut out without copying, and every other field
   * is parsed by protobuf from a small copy. (Protobuf's own aliasing parse copies any bytes field that
   * spans buffers, and HTTP/2 delivers a large message as many 16 KiB frames.) Groups, never used by these
   * messages, fall back to protobuf's aliasing parse.
   */
  private T parseAliased(ByteString all) throws IOException {
    int pos = 0;
    int n = all.size();
    ByteString chunk = ByteString.EMPTY;
    ByteString.Output rest = null;
    while (pos < n) {
      int start = pos;
      long tag = varint(all, pos);
      pos = varintEnd(all, pos);
      int wireType = (int) (tag & 7);
      long field = tag >>> 3;
      int end;
      switch (wireType) {
        case 0 -> end = varintEnd(all, pos);
        case 1 -> end = pos + 8;
        case 5 -> end = pos + 4;
        case 2 -> {
          long len = varint(all, pos);
          pos = varintEnd(all, pos);
          if (len < 0 || len > n - pos) {
            throw new InvalidProtocolBufferException("Field " + field + " claims " + len + " bytes; "
                + (n - pos) + " are left");
          }
          end = (int) (pos + len);
          if (field == chunkField) {
            chunk = all.substring(pos, end);
            pos = end;
            continue;
          }
        }
        default -> {
          CodedInputStream cis = all.newCodedInput();
          cis.enableAliasing(true);
          cis.setSizeLimit(Integer.MAX_VALUE);
          return parser.parseFrom(cis);
        }
      }
      if (end > n) {
        throw new InvalidProtocolBufferException("Field " + field + " runs past the end of the message");
      }
      if (rest == null) {
        rest = ByteString.newOutput(64);
      }
      all.substring(start, end).writeTo(rest);
      pos = end;
    }
    T message = rest == null ? prototype : parser.parseFrom(rest.toByteString());
    return chunk.isEmpty() ? message : withChunk.apply(message, chunk);
  }

  private static long varint(ByteString b, int pos) throws InvalidProtocolBufferException {
    long v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos >= b.size()) {
        throw new InvalidProtocolBufferException("A varint runs past the end of the message");
      }
      byte x = b.byteAt(pos++);
      v |= (long) (x & 0x7f) << shift;
      if (x >= 0) {
        return v;
      }
    }
    throw new InvalidProtocolBufferException("A varint is longer than 10 bytes");
  }

  private static int varintEnd(ByteString b, int pos) throws InvalidProtocolBufferException {
    for (int i = 0; i < 10; i++) {
      if (pos >= b.size()) {
        throw new InvalidProtocolBufferException("A varint runs past the end of the message");
      }
      if (b.byteAt(pos++) >= 0) {
        return pos;
      }
    }
    throw new InvalidProtocolBufferException("A varint is longer than 10 bytes");
  }

  private static void closeQuietly(InputStream s) {
    try {
      s.close();
    } catch (IOException ignored) {
      // the transport's buffers do not fail to close
    }
  }

  /**
   * The serialised message: {@code head} (every field but the chunk, then the chunk's tag and length),
   * then the chunk. Drained once by gRPC; plain reads work too (in-process transport, compression).
   */
  private static final class ChunkStream extends InputStream implements Drainable, KnownLength {
    private final byte[] head;
    private final ByteString chunk;
    private Runnable release;
    private int pos;

    ChunkStream(byte[] head, ByteString chunk, Runnable release) {
      this.head = head;
      this.chunk = chunk;
      this.release = release;
    }

    private int total() {
      return head.length + chunk.size();
    }

    @Override
    public int available() {
      return total() - pos;
    }

    @Override
    public int drainTo(OutputStream target) throws IOException {
      int n = available();
      if (pos < head.length) {
        target.write(head, pos, head.length - pos);
        pos = head.length;
      }
      int from = pos - head.length;
      if (from < chunk.size()) {
        UnsafeByteOperations.unsafeWriteTo(from == 0 ? chunk : chunk.substring(from), new Target(target));
      }
      pos = total();
      return n;
    }

    @Override
    public int read() throws IOException {
      if (pos >= total()) {
        return -1;
      }
      int b = pos < head.length ? head[pos] : chunk.byteAt(pos - head.length);
      pos++;
      return b & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) {
      if (len == 0) {
        return 0;
      }
      int left = available();
      if (left == 0) {
        return -1;
      }
      int n = Math.min(len, left);
      int done = 0;
      if (pos < head.length) {
        int h = Math.min(n, head.length - pos);
        System.arraycopy(head, pos, b, off, h);
        done = h;
      }
      if (done < n) {
        chunk.copyTo(b, pos + done - head.length, off + done, n - done);
      }
      pos += n;
      return n;
    }

    @Override
    public void close() {
      Runnable r = release;
      release = null;
      if (r != null) {
        r.run();
      }
    }
  }

  /** Writes a chunk's memory into gRPC's stream: arrays straight, direct buffers through scratch. */
  private static final class Target extends ByteOutput {
    private final OutputStream out;

    Target(OutputStream out) {
      this.out = out;
    }

    @Override
    public void write(byte value) throws IOException {
      out.write(value);
    }

    @Override
    public void write(byte[] value, int offset, int length) throws IOException {
      out.write(value, offset, length);
    }

    @Override
    public void writeLazy(byte[] value, int offset, int length) throws IOException {
      out.write(value, offset, length);
    }

    @Override
    public void write(ByteBuffer value) throws IOException {
      if (value.hasArray()) {
        out.write(value.array(), value.arrayOffset() + value.position(), value.remaining());
        value.position(value.limit());
        return;
      }
      byte[] scratch = SCRATCH_ARRAY.get();
      while (value.hasRemaining()) {
        int n = Math.min(scratch.length, value.remaining());
        value.get(scratch, 0, n);
        out.write(scratch, 0, n);
      }
    }

    @Override
    public void writeLazy(ByteBuffer value) throws IOException {
      write(value);
    }
  }
}
