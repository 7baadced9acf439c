package io.strata.shuffle;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * How a seal round cuts a shuffle's open epochs into parts ({@link ShuffleSealer#parts}): beginning at the first
 * reader's partition and wrapping around, each partition's epochs together and in epoch order, parts doubling in
 * size with no small tail; that a round started at a map stage's end goes to the seal pool or is left to the first
 * reader ({@link ShuffleSealer#sealAhead}); and how a handle packs its locations ({@link PackedLocations}).
 */
class ShuffleSealPartsTest {
  private static PartitionLocation loc(int partition, int epoch) {
    return new PartitionLocation(partition, epoch, 1000L * partition + epoch, "/.shuffle/app/0/" + partition + "-" + epoch,
        1 << 20, "localhost", 7000 + partition % 3, partition % 5 == 0 ? "" : "127.0.0.1",
        partition % 5 == 0 ? 0 : 7100 + partition % 3);
  }

  @Test
  void parts_beginAtTheAskersPartition_wrapAround_andDoubleWithoutASmallTail() {
    List<PartitionLocation> open = new ArrayList<>();
    for (int p = 0; p < 200; p++) {
      open.add(loc(p, 0));
    }
    Collections.shuffle(open, new java.util.Random(7));
    List<List<PartitionLocation>> parts = ShuffleSealer.parts(open, 150);
    // 32, 64, then the 104 left (less than two more parts of 128) in one.
    assertThat(parts).extracting(List::size).containsExactly(32, 64, 104);
    List<Integer> order = parts.stream().flatMap(List::stream).map(PartitionLocation::partitionId).toList();
    List<Integer> expected = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      expected.add((150 + i) % 200);
    }
    assertThat(order).isEqualTo(expected);
  }

  @Test
  void parts_keepAPartitionsEpochsInEpochOrder_andTakeEveryEpochOnce() {
    List<PartitionLocation> open = new ArrayList<>(List.of(loc(3, 2), loc(1, 0), loc(3, 0), loc(0, 1), loc(3, 1)));
    List<List<PartitionLocation>> parts = ShuffleSealer.parts(open, 2);
    assertThat(parts).hasSize(1);
    assertThat(parts.get(0)).containsExactly(loc(3, 0), loc(3, 1), loc(3, 2), loc(0, 1), loc(1, 0));
    assertThat(ShuffleSealer.parts(List.of(), 0)).isEmpty();
    List<PartitionLocation> many = new ArrayList<>();
    for (int p = 0; p < 1000; p++) {
      many.add(loc(p, 0));
    }
    List<List<PartitionLocation>> cut = ShuffleSealer.parts(many, 0);
    assertThat(cut).extracting(List::size).containsExactly(32, 64, 128, 256, 520);
    assertThat(cut.stream().flatMap(List::stream).distinct().count()).isEqualTo(1000);
  }

  @Test
  void sealAhead_startsOneRoundOnTheSealPool_andLeavesItToTheFirstReaderWhenNoThreadIsFree() {
    ShuffleState s = new ShuffleState("app", 0, 2, "/.shuffle/app/0");
    synchronized (s) {
      s.opened(loc(0, 0));
      s.opened(loc(1, 0));
    }
    ShuffleSealer busy = new ShuffleSealer(null, null, r -> {
      throw new java.util.concurrent.RejectedExecutionException("every seal thread is busy");
    });
    busy.sealAhead(s);
    assertThat(s.sealing).as("no round is left behind that nothing runs").isNull();

    List<Runnable> started = new ArrayList<>();
    ShuffleSealer free = new ShuffleSealer(null, null, started::add);
    free.sealAhead(s);
    assertThat(started).as("one round, handed to the seal pool, not run on the caller's thread").hasSize(1);
    assertThat(s.sealing).as("the round readers will wait on").isNotNull();
    free.sealAhead(s);
    assertThat(started).as("no second round while one runs").hasSize(1);

    ShuffleState none = new ShuffleState("app", 1, 2, "/.shuffle/app/1");
    free.sealAhead(none);
    assertThat(started).as("nothing open, nothing to seal").hasSize(1);
    assertThat(none.sealing).isNull();
  }

  @Test
  void packedLocations_unpackToTheSameLocations_forEveryHostAndDirectory() throws Exception {
    PartitionLocation[] locs = new PartitionLocation[300];
    for (int p = 0; p < locs.length; p++) {
      locs[p] = loc(p, p % 4);
    }
    locs[7] = new PartitionLocation(7, 0, 77, "/elsewhere/é-7", 64 << 20, "host-ü", 1, "", 0);
    locs[8] = new PartitionLocation(8, 0, 78, "noslash", 1, "a", 2, "b", 3);
    byte[] packed = PackedLocations.pack(locs);
    assertThat(PackedLocations.unpack(packed)).containsExactly(locs);
    assertThat(PackedLocations.unpack(PackedLocations.pack(new PartitionLocation[0]))).isEmpty();
    // Smaller than the objects serialized (hosts each once, as a task's handle holds them: a string per location),
    // and one array to copy per task instead of a graph to rebuild.
    for (int p = 0; p < locs.length; p++) {
      PartitionLocation l = locs[p];
      locs[p] = new PartitionLocation(l.partitionId(), l.epoch(), l.fileId(), l.path(), l.blockSize(),
          new String(l.primaryHost()), l.primaryPort(), new String(l.replicaHost()), l.replicaPort());
    }
    java.io.ByteArrayOutputStream objects = new java.io.ByteArrayOutputStream();
    try (java.io.ObjectOutputStream out = new java.io.ObjectOutputStream(objects)) {
      out.writeObject(locs);
    }
    assertThat(PackedLocations.pack(locs)).isEqualTo(packed);
    assertThat(packed.length).isLessThan(objects.size() * 3 / 4);
  }
}
