package io.strata.worker.store;

import static io.strata.worker.store.FakeDir.free;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class MaxFreeAllocatorTest extends AllocatorContractTest {
  @Override
  Allocator newAllocator() {
    return new MaxFreeAllocator();
  }

  @Test
  void allocate_picksTheDirWithTheMostAvailableSpace() {
    FakeDir emptiest = free(1, 700);
    List<FakeDir> dirs = List.of(free(0, 300), emptiest, free(2, 699));
    assertThat(newAllocator().allocate(dirs, 10)).isSameAs(emptiest);
  }

  @Test
  void allocate_onATie_picksTheLowestDirIndex_notTheFirstInTheList() {
    FakeDir low = free(0, 500);
    List<FakeDir> dirs = List.of(free(2, 500), free(3, 100), low, free(1, 500));
    assertThat(newAllocator().allocate(dirs, 10)).isSameAs(low);
  }

  @Test
  void allocate_keepsPickingTheSameDir_whileItStaysTheEmptiest() {
    // Stateless: unlike round robin, nothing moves on between calls.
    Allocator allocator = newAllocator();
    FakeDir emptiest = free(2, 900);
    List<FakeDir> dirs = List.of(free(0, 100), free(1, 100), emptiest);
    assertThat(allocator.allocate(dirs, 10)).isSameAs(emptiest);
    assertThat(allocator.allocate(dirs, 10)).isSameAs(emptiest);
  }

  @Test
  void allocate_skipsABadDir_andPicksTheEmptiestGoodOne() {
    FakeDir second = free(2, 600);
    List<FakeDir> dirs = List.of(free(0, 200), free(1, 900).bad(), second);
    assertThat(newAllocator().allocate(dirs, 10)).isSameAs(second);
  }
}
