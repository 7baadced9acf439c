package io.strata.master.journal;

import io.strata.proto.journal.JournalEntryProto;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * The framing of journal segment and checkpoint files: a sequence of records, each
 * {@code [int32 length > 0][int32 crc32c of payload][payload = JournalEntryProto]}, big-endian.
 *
 * <p>Reading tells a torn tail from corruption. A process killed mid-write leaves a prefix of its last
 * write (a short header, a payload that runs past the end of the file); a crash of the machine may also
 * leave garbage or zeros after it. Either way no whole record follows the damage. So a scan stops at the
 * first damaged record ({@link Scan#tornAt}) and then looks for any whole record after it
 * ({@link Scan#resumesAt}): none means a torn tail the caller may cut; one means the damage is in the
 * middle and cutting would lose entries. Stateless.
 */
final class RecordFile {
  static final int HEADER = 8;
  static final int MAX_RECORD = 64 << 20;
  /**
   * Every segment record's payload starts with the tag of its sequence field (field 1, varint; the
   * sequence is never 0 in a segment). Checked before the checksum when looking for a record after
   * damage, so a long garbage tail is searched in linear rather than cubic time.
   */
  private static final byte SEQUENCE_TAG = 0x08;

  private RecordFile() {}

  /**
   * What a scan found: the whole records before any damage with their start offsets; where the whole
   * records end; the offset of the first damaged record (-1: none) and of the first whole record after
   * the damage (-1: none, or no damage).
   */
  record Scan(List<JournalEntryProto> entries, List<Long> offsets, long validEnd, long tornAt, long resumesAt) {}

  /**
   * Writes a batch of records: encoded in one buffer and written at once when it is at most {@link #WRITE_BUFFER}
   * bytes (the usual group commit), else streamed through a buffer of that size ({@link #write}), so a batch of many
   * large entries never overflows one buffer's int size.
   */
  static void writeBatch(FileChannel ch, List<JournalEntryProto> entries) throws IOException {
    long size = 0;
    for (JournalEntryProto e : entries) {
      size += HEADER + e.getSerializedSize();
    }
    if (size > WRITE_BUFFER) {
      write(ch, entries, WRITE_BUFFER);
      return;
    }
    ByteBuffer buf = encode(entries);
    while (buf.hasRemaining()) {
      ch.write(buf);
    }
  }

  /** The records of {@code entries} in one buffer; refuses a total past what one buffer holds. */
  static ByteBuffer encode(List<JournalEntryProto> entries) {
    long total = 0;
    for (JournalEntryProto e : entries) {
      total += HEADER + e.getSerializedSize();
    }
    if (total > Integer.MAX_VALUE - 8) {
      throw new IllegalArgumentException(total + " bytes of journal records do not fit one buffer: write them with "
          + "RecordFile.write");
    }
    int size = (int) total;
    ByteBuffer buf = ByteBuffer.allocate(size).order(ByteOrder.BIG_ENDIAN);
    CRC32C crc = new CRC32C();
    for (JournalEntryProto e : entries) {
      byte[] payload = e.toByteArray();
      crc.reset();
      crc.update(payload);
      buf.putInt(payload.length).putInt((int) crc.getValue()).put(payload);
    }
    buf.flip();
    return buf;
  }

  /** The buffer {@link #write} fills before each write of the channel. */
  static final int WRITE_BUFFER = 1 << 20;

  /**
   * Writes the records of {@code entries} to {@code ch} through a buffer of at most {@code bufferBytes} (a record
   * bigger than that is written on its own), so a file of any size (a checkpoint of a big namespace passes 2 GiB,
   * past what one {@link #encode}d buffer can hold) needs no more memory than the buffer and one record. Returns the
   * bytes written.
   */
  static long write(FileChannel ch, Iterable<JournalEntryProto> entries, int bufferBytes) throws IOException {
    ByteBuffer buf = ByteBuffer.allocate(bufferBytes).order(ByteOrder.BIG_ENDIAN);
    CRC32C crc = new CRC32C();
    long written = 0;
    for (JournalEntryProto e : entries) {
      byte[] payload = e.toByteArray();
      crc.reset();
      crc.update(payload);
      if (buf.remaining() < HEADER + payload.length) {
        written += drain(ch, buf);
      }
      if (buf.remaining() >= HEADER + payload.length) {
        buf.putInt(payload.length).putInt((int) crc.getValue()).put(payload);
      } else {
        ByteBuffer one = ByteBuffer.allocate(HEADER + payload.length).order(ByteOrder.BIG_ENDIAN);
        one.putInt(payload.length).putInt((int) crc.getValue()).put(payload);
        written += drain(ch, one);
      }
    }
    return written + drain(ch, buf);
  }

  private static long drain(FileChannel ch, ByteBuffer buf) throws IOException {
    buf.flip();
    long n = buf.remaining();
    while (buf.hasRemaining()) {
      ch.write(buf);
    }
    buf.clear();
    return n;
  }

  /**
   * Reads a file that must be whole (a checkpoint) record by record, handing each entry to {@code each} as it is read,
   * so the file's entries are never all in memory at once; returns how many. A damaged record, or bytes after the last
   * whole one, throws {@link CorruptJournalException} naming the offset (the entries before it were handed over).
   */
  static long readWhole(Path file, java.util.function.Consumer<JournalEntryProto> each) throws IOException {
    long n = 0;
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      long size = ch.size();
      ByteBuffer header = ByteBuffer.allocate(HEADER).order(ByteOrder.BIG_ENDIAN);
      CRC32C crc = new CRC32C();
      for (long pos = 0; pos < size; n++) {
        byte[] payload = record(ch, pos, size, header, crc);
        if (payload == null) {
          throw new CorruptJournalException(file + " is damaged at offset " + pos);
        }
        each.accept(JournalEntryProto.parseFrom(payload));
        pos += HEADER + payload.length;
      }
    }
    return n;
  }

  /**
   * The payload of the whole record at {@code pos}, or null when none starts there: a short header, a length that is
   * 0 (what a zero-filled tail reads as; never written), too big or past the end, or a payload failing its checksum.
   */
  private static byte[] record(FileChannel ch, long pos, long size, ByteBuffer header, CRC32C crc)
      throws IOException {
    if (size - pos < HEADER) {
      return null;
    }
    header.clear();
    readFully(ch, header, pos);
    header.flip();
    int len = header.getInt();
    int sum = header.getInt();
    if (len <= 0 || len > MAX_RECORD || pos + HEADER + len > size) {
      return null;
    }
    ByteBuffer payload = ByteBuffer.allocate(len);
    readFully(ch, payload, pos + HEADER);
    crc.reset();
    crc.update(payload.array(), 0, len);
    return (int) crc.getValue() == sum ? payload.array() : null;
  }

  static Scan scan(Path file) throws IOException {
    List<JournalEntryProto> out = new ArrayList<>();
    List<Long> offsets = new ArrayList<>();
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      long size = ch.size();
      long pos = 0;
      ByteBuffer header = ByteBuffer.allocate(HEADER).order(ByteOrder.BIG_ENDIAN);
      CRC32C crc = new CRC32C();
      while (pos < size) {
        byte[] payload = record(ch, pos, size, header, crc);
        if (payload == null) {
          break; // damaged here: a torn tail, or corruption if a whole record follows
        }
        out.add(JournalEntryProto.parseFrom(payload));
        offsets.add(pos);
        pos += HEADER + payload.length;
      }
      if (pos >= size) {
        return new Scan(out, offsets, pos, -1, -1);
      }
      return new Scan(out, offsets, pos, pos, wholeRecordAfter(ch, pos, size));
    }
  }

  /** The offset of the first whole segment record that starts after {@code damaged}, or -1. */
  private static long wholeRecordAfter(FileChannel ch, long damaged, long size) throws IOException {
    long from = damaged + 1;
    if (size - from <= HEADER) {
      return -1;
    }
    // A segment past 2 GB (a huge segment size setting) is searched in its first 2 GB after the damage.
    MappedByteBuffer tail = ch.map(FileChannel.MapMode.READ_ONLY, from, Math.min(size - from, Integer.MAX_VALUE));
    tail.order(ByteOrder.BIG_ENDIAN);
    int n = tail.capacity();
    CRC32C crc = new CRC32C();
    for (int q = 0; q + HEADER < n; q++) {
      int len = tail.getInt(q);
      if (len <= 0 || len > n - q - HEADER || tail.get(q + HEADER) != SEQUENCE_TAG) {
        continue;
      }
      crc.reset();
      crc.update(tail.slice(q + HEADER, len));
      if ((int) crc.getValue() == tail.getInt(q + 4)) {
        return from + q;
      }
    }
    return -1;
  }

  private static void readFully(FileChannel ch, ByteBuffer buf, long pos) throws IOException {
    while (buf.hasRemaining()) {
      int n = ch.read(buf, pos + buf.position());
      if (n < 0) {
        throw new IOException("unexpected end of file");
      }
    }
  }
}
