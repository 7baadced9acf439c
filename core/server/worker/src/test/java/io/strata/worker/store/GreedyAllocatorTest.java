package io.strata.worker.store;

import static io.strata.worker.store.FakeDir.free;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class GreedyAllocatorTest extends AllocatorContractTest {
  @Override
  Allocator newAllocator() {
    return new GreedyAllocator();
  }

  @Test
  void allocate_picksTheFirstDirWithRoom_evenWhenALaterOneHasMore() {
    FakeDir first = free(0, 150);
    List<FakeDir> dirs = List.of(first, free(1, 900), free(2, 800));
    assertThat(newAllocator().allocate(dirs, 100)).isSameAs(first);
  }

  @Test
  void allocate_skipsLeadingDirsThatAreFullOrBad() {
    FakeDir third = free(2, 100);
    List<FakeDir> dirs = List.of(free(0, 99), free(1, 900).bad(), third, free(3, 900));
    assertThat(newAllocator().allocate(dirs, 100)).isSameAs(third);
  }

  @Test
  void allocate_followsListOrder_notDirIndex() {
    FakeDir listedFirst = free(5, 200);
    List<FakeDir> dirs = List.of(listedFirst, free(0, 200));
    assertThat(newAllocator().allocate(dirs, 100)).isSameAs(listedFirst);
  }
}
