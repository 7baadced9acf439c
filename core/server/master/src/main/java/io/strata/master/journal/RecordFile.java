package io.strata.master.journal;

import io.strata.proto.journal.JournalEntryProto;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * The framing of journal segment and checkpoint files: a sequence of records, each
 * {@code [int32 length][int32 crc32c of payload][payload = JournalEntryProto]}, big-endian.
 *
 * <p>Reading tells a torn tail from corruption. A process killed mid-write can leave only the last
 * record incomplete (a short header, or a payload that runs past the end of the file, or a checksum
 * mismatch on a record that ends exactly at the end of the file): that tail is reported as
 * {@link Scan#tornAt} so the caller can cut it. A bad record followed by more data is corruption in the
 * middle: {@link CorruptJournalException}. Stateless.
 */
final class RecordFile {
  static final int HEADER = 8;
  static final int MAX_RECORD = 64 << 20;

  private RecordFile() {}

  /** What a scan found: the entries, and where the whole records end (the file length if no torn tail). */
  record Scan(List<JournalEntryProto> entries, long validEnd, long tornAt) {}

  static ByteBuffer encode(List<JournalEntryProto> entries) {
    int size = 0;
    for (JournalEntryProto e : entries) {
      size += HEADER + e.getSerializedSize();
    }
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

  static Scan scan(Path file) throws IOException {
    List<JournalEntryProto> out = new ArrayList<>();
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      long size = ch.size();
      long pos = 0;
      ByteBuffer header = ByteBuffer.allocate(HEADER).order(ByteOrder.BIG_ENDIAN);
      CRC32C crc = new CRC32C();
      while (pos < size) {
        if (size - pos < HEADER) {
          return new Scan(out, pos, pos);
        }
        header.clear();
        readFully(ch, header, pos);
        header.flip();
        int len = header.getInt();
        int sum = header.getInt();
        if (len < 0 || len > MAX_RECORD) {
          if (pos + HEADER >= size) {
            return new Scan(out, pos, pos);
          }
          throw new CorruptJournalException(file + ": record at offset " + pos + " claims " + len
              + " bytes; the journal is corrupt before its end (" + (size - pos) + " bytes remain)");
        }
        if (pos + HEADER + len > size) {
          return new Scan(out, pos, pos); // the last record was cut short
        }
        ByteBuffer payload = ByteBuffer.allocate(len);
        readFully(ch, payload, pos + HEADER);
        crc.reset();
        crc.update(payload.array(), 0, len);
        if ((int) crc.getValue() != sum) {
          if (pos + HEADER + len == size) {
            return new Scan(out, pos, pos); // a torn last record
          }
          throw new CorruptJournalException(file + ": record at offset " + pos + " fails its checksum and "
              + (size - pos - HEADER - len) + " bytes follow it: the journal is corrupt in the middle; refusing "
              + "to start rather than lose the entries after it");
        }
        out.add(JournalEntryProto.parseFrom(payload.array()));
        pos += HEADER + len;
      }
      return new Scan(out, pos, -1);
    }
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
